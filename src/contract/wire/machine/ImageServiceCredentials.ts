// Original file: protos/machine/image.proto


export interface ImageServiceCredentials {
  'host'?: (string);
  'username'?: (string);
  'password'?: (string);
}

export interface ImageServiceCredentials__Output {
  'host': (string);
  'username': (string);
  'password': (string);
}
