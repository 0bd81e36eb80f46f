// Original file: protos/resource/definitions/network/network.proto

import type { NethelpersBondMode as _talos_resource_definitions_enums_NethelpersBondMode, NethelpersBondMode__Output as _talos_resource_definitions_enums_NethelpersBondMode__Output } from '../../../../talos/resource/definitions/enums/NethelpersBondMode.ts';
import type { NethelpersBondXmitHashPolicy as _talos_resource_definitions_enums_NethelpersBondXmitHashPolicy, NethelpersBondXmitHashPolicy__Output as _talos_resource_definitions_enums_NethelpersBondXmitHashPolicy__Output } from '../../../../talos/resource/definitions/enums/NethelpersBondXmitHashPolicy.ts';
import type { NethelpersLACPRate as _talos_resource_definitions_enums_NethelpersLACPRate, NethelpersLACPRate__Output as _talos_resource_definitions_enums_NethelpersLACPRate__Output } from '../../../../talos/resource/definitions/enums/NethelpersLACPRate.ts';
import type { NethelpersARPValidate as _talos_resource_definitions_enums_NethelpersARPValidate, NethelpersARPValidate__Output as _talos_resource_definitions_enums_NethelpersARPValidate__Output } from '../../../../talos/resource/definitions/enums/NethelpersARPValidate.ts';
import type { NethelpersARPAllTargets as _talos_resource_definitions_enums_NethelpersARPAllTargets, NethelpersARPAllTargets__Output as _talos_resource_definitions_enums_NethelpersARPAllTargets__Output } from '../../../../talos/resource/definitions/enums/NethelpersARPAllTargets.ts';
import type { NethelpersPrimaryReselect as _talos_resource_definitions_enums_NethelpersPrimaryReselect, NethelpersPrimaryReselect__Output as _talos_resource_definitions_enums_NethelpersPrimaryReselect__Output } from '../../../../talos/resource/definitions/enums/NethelpersPrimaryReselect.ts';
import type { NethelpersFailOverMAC as _talos_resource_definitions_enums_NethelpersFailOverMAC, NethelpersFailOverMAC__Output as _talos_resource_definitions_enums_NethelpersFailOverMAC__Output } from '../../../../talos/resource/definitions/enums/NethelpersFailOverMAC.ts';
import type { NethelpersADSelect as _talos_resource_definitions_enums_NethelpersADSelect, NethelpersADSelect__Output as _talos_resource_definitions_enums_NethelpersADSelect__Output } from '../../../../talos/resource/definitions/enums/NethelpersADSelect.ts';
import type { NetIP as _common_NetIP, NetIP__Output as _common_NetIP__Output } from '../../../../common/NetIP.ts';
import type { NethelpersADLACPActive as _talos_resource_definitions_enums_NethelpersADLACPActive, NethelpersADLACPActive__Output as _talos_resource_definitions_enums_NethelpersADLACPActive__Output } from '../../../../talos/resource/definitions/enums/NethelpersADLACPActive.ts';

export interface BondMasterSpec {
  'mode'?: (_talos_resource_definitions_enums_NethelpersBondMode);
  'hash_policy'?: (_talos_resource_definitions_enums_NethelpersBondXmitHashPolicy);
  'lacp_rate'?: (_talos_resource_definitions_enums_NethelpersLACPRate);
  'arp_validate'?: (_talos_resource_definitions_enums_NethelpersARPValidate);
  'arp_all_targets'?: (_talos_resource_definitions_enums_NethelpersARPAllTargets);
  'primary_index'?: (number);
  'primary_reselect'?: (_talos_resource_definitions_enums_NethelpersPrimaryReselect);
  'fail_over_mac'?: (_talos_resource_definitions_enums_NethelpersFailOverMAC);
  'ad_select'?: (_talos_resource_definitions_enums_NethelpersADSelect);
  'mii_mon'?: (number);
  'up_delay'?: (number);
  'down_delay'?: (number);
  'arp_interval'?: (number);
  'resend_igmp'?: (number);
  'min_links'?: (number);
  'lp_interval'?: (number);
  'packets_per_slave'?: (number);
  'num_peer_notif'?: (number);
  'tlb_dynamic_lb'?: (number);
  'all_slaves_active'?: (number);
  'use_carrier'?: (boolean);
  'ad_actor_sys_prio'?: (number);
  'ad_user_port_key'?: (number);
  'peer_notify_delay'?: (number);
  'arpip_targets'?: (_common_NetIP)[];
  'nsip6_targets'?: (_common_NetIP)[];
  'adlacp_active'?: (_talos_resource_definitions_enums_NethelpersADLACPActive);
  'missed_max'?: (number);
}

export interface BondMasterSpec__Output {
  'mode': (_talos_resource_definitions_enums_NethelpersBondMode__Output);
  'hash_policy': (_talos_resource_definitions_enums_NethelpersBondXmitHashPolicy__Output);
  'lacp_rate': (_talos_resource_definitions_enums_NethelpersLACPRate__Output);
  'arp_validate': (_talos_resource_definitions_enums_NethelpersARPValidate__Output);
  'arp_all_targets': (_talos_resource_definitions_enums_NethelpersARPAllTargets__Output);
  'primary_index': (number);
  'primary_reselect': (_talos_resource_definitions_enums_NethelpersPrimaryReselect__Output);
  'fail_over_mac': (_talos_resource_definitions_enums_NethelpersFailOverMAC__Output);
  'ad_select': (_talos_resource_definitions_enums_NethelpersADSelect__Output);
  'mii_mon': (number);
  'up_delay': (number);
  'down_delay': (number);
  'arp_interval': (number);
  'resend_igmp': (number);
  'min_links': (number);
  'lp_interval': (number);
  'packets_per_slave': (number);
  'num_peer_notif': (number);
  'tlb_dynamic_lb': (number);
  'all_slaves_active': (number);
  'use_carrier': (boolean);
  'ad_actor_sys_prio': (number);
  'ad_user_port_key': (number);
  'peer_notify_delay': (number);
  'arpip_targets': (_common_NetIP__Output)[];
  'nsip6_targets': (_common_NetIP__Output)[];
  'adlacp_active': (_talos_resource_definitions_enums_NethelpersADLACPActive__Output);
  'missed_max': (number);
}
