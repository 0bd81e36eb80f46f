// Original file: protos/machine/image.proto

import type { ImageServiceCredentials as _machine_ImageServiceCredentials, ImageServiceCredentials__Output as _machine_ImageServiceCredentials__Output } from '../machine/ImageServiceCredentials.ts';

export interface ImageServiceVerifyRequest {
  'image_ref'?: (string);
  'credentials'?: (_machine_ImageServiceCredentials | null);
}

export interface ImageServiceVerifyRequest__Output {
  'image_ref': (string);
  'credentials': (_machine_ImageServiceCredentials__Output | null);
}
