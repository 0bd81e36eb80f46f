// Original file: protos/machine/image.proto


export interface ImageServiceVerifyResponse {
  'verified'?: (boolean);
  'message'?: (string);
  'digested_image_ref'?: (string);
}

export interface ImageServiceVerifyResponse__Output {
  'verified': (boolean);
  'message': (string);
  'digested_image_ref': (string);
}
