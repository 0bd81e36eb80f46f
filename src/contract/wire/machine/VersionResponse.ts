// Original file: protos/machine/machine.proto

import type { Version as _machine_Version, Version__Output as _machine_Version__Output } from '../machine/Version.ts';

export interface VersionResponse {
  'messages'?: (_machine_Version)[];
}

export interface VersionResponse__Output {
  'messages': (_machine_Version__Output)[];
}
