// Original file: protos/machine/image.proto


export interface ImageServiceImportResponse {
  'name'?: (string);
}

export interface ImageServiceImportResponse__Output {
  'name': (string);
}
