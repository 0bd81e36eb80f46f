// Original file: protos/machine/machine.proto


export interface _machine_NetstatRequest_Feature {
  'pid'?: (boolean);
}

export interface _machine_NetstatRequest_Feature__Output {
  'pid': (boolean);
}

// Original file: protos/machine/machine.proto

export const _machine_NetstatRequest_Filter = {
  ALL: 'ALL',
  CONNECTED: 'CONNECTED',
  LISTENING: 'LISTENING',
} as const;

export type _machine_NetstatRequest_Filter =
  | 'ALL'
  | 0
  | 'CONNECTED'
  | 1
  | 'LISTENING'
  | 2

export type _machine_NetstatRequest_Filter__Output = typeof _machine_NetstatRequest_Filter[keyof typeof _machine_NetstatRequest_Filter]

export interface _machine_NetstatRequest_L4proto {
  'tcp'?: (boolean);
  'tcp6'?: (boolean);
  'udp'?: (boolean);
  'udp6'?: (boolean);
  'udplite'?: (boolean);
  'udplite6'?: (boolean);
  'raw'?: (boolean);
  'raw6'?: (boolean);
}

export interface _machine_NetstatRequest_L4proto__Output {
  'tcp': (boolean);
  'tcp6': (boolean);
  'udp': (boolean);
  'udp6': (boolean);
  'udplite': (boolean);
  'udplite6': (boolean);
  'raw': (boolean);
  'raw6': (boolean);
}

export interface _machine_NetstatRequest_NetNS {
  'hostnetwork'?: (boolean);
  'netns'?: (string)[];
  'allnetns'?: (boolean);
}

export interface _machine_NetstatRequest_NetNS__Output {
  'hostnetwork': (boolean);
  'netns': (string)[];
  'allnetns': (boolean);
}

export interface NetstatRequest {
  'filter'?: (_machine_NetstatRequest_Filter);
  'feature'?: (_machine_NetstatRequest_Feature | null);
  'l4proto'?: (_machine_NetstatRequest_L4proto | null);
  'netns'?: (_machine_NetstatRequest_NetNS | null);
}

export interface NetstatRequest__Output {
  'filter': (_machine_NetstatRequest_Filter__Output);
  'feature': (_machine_NetstatRequest_Feature__Output | null);
  'l4proto': (_machine_NetstatRequest_L4proto__Output | null);
  'netns': (_machine_NetstatRequest_NetNS__Output | null);
}
