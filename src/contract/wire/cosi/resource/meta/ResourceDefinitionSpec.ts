// Original file: protos/cosi/v1alpha1/meta.proto


export interface _cosi_resource_meta_ResourceDefinitionSpec_PrintColumn {
  'name'?: (string);
  'json_path'?: (string);
}

export interface _cosi_resource_meta_ResourceDefinitionSpec_PrintColumn__Output {
  'name': (string);
  'json_path': (string);
}

// Original file: protos/cosi/v1alpha1/meta.proto

export const _cosi_resource_meta_ResourceDefinitionSpec_Sensitivity = {
  NON_SENSITIVE: 'NON_SENSITIVE',
  SENSITIVE: 'SENSITIVE',
} as const;

export type _cosi_resource_meta_ResourceDefinitionSpec_Sensitivity =
  | 'NON_SENSITIVE'
  | 0
  | 'SENSITIVE'
  | 1

export type _cosi_resource_meta_ResourceDefinitionSpec_Sensitivity__Output = typeof _cosi_resource_meta_ResourceDefinitionSpec_Sensitivity[keyof typeof _cosi_resource_meta_ResourceDefinitionSpec_Sensitivity]

export interface ResourceDefinitionSpec {
  'resource_type'?: (string);
  'display_type'?: (string);
  'default_namespace'?: (string);
  'aliases'?: (string)[];
  'all_aliases'?: (string)[];
  'print_columns'?: (_cosi_resource_meta_ResourceDefinitionSpec_PrintColumn)[];
  'sensitivity'?: (_cosi_resource_meta_ResourceDefinitionSpec_Sensitivity);
}

export interface ResourceDefinitionSpec__Output {
  'resource_type': (string);
  'display_type': (string);
  'default_namespace': (string);
  'aliases': (string)[];
  'all_aliases': (string)[];
  'print_columns': (_cosi_resource_meta_ResourceDefinitionSpec_PrintColumn__Output)[];
  'sensitivity': (_cosi_resource_meta_ResourceDefinitionSpec_Sensitivity__Output);
}
