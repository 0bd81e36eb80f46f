// Original file: protos/machine/machine.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { ApplyConfigurationRequest as _machine_ApplyConfigurationRequest, ApplyConfigurationRequest__Output as _machine_ApplyConfigurationRequest__Output } from '../machine/ApplyConfigurationRequest.ts';
import type { ApplyConfigurationResponse as _machine_ApplyConfigurationResponse, ApplyConfigurationResponse__Output as _machine_ApplyConfigurationResponse__Output } from '../machine/ApplyConfigurationResponse.ts';
import type { BootstrapRequest as _machine_BootstrapRequest, BootstrapRequest__Output as _machine_BootstrapRequest__Output } from '../machine/BootstrapRequest.ts';
import type { BootstrapResponse as _machine_BootstrapResponse, BootstrapResponse__Output as _machine_BootstrapResponse__Output } from '../machine/BootstrapResponse.ts';
import type { CPUFreqStatsResponse as _machine_CPUFreqStatsResponse, CPUFreqStatsResponse__Output as _machine_CPUFreqStatsResponse__Output } from '../machine/CPUFreqStatsResponse.ts';
import type { CPUInfoResponse as _machine_CPUInfoResponse, CPUInfoResponse__Output as _machine_CPUInfoResponse__Output } from '../machine/CPUInfoResponse.ts';
import type { ContainersRequest as _machine_ContainersRequest, ContainersRequest__Output as _machine_ContainersRequest__Output } from '../machine/ContainersRequest.ts';
import type { ContainersResponse as _machine_ContainersResponse, ContainersResponse__Output as _machine_ContainersResponse__Output } from '../machine/ContainersResponse.ts';
import type { CopyRequest as _machine_CopyRequest, CopyRequest__Output as _machine_CopyRequest__Output } from '../machine/CopyRequest.ts';
import type { Data as _common_Data, Data__Output as _common_Data__Output } from '../common/Data.ts';
import type { DiskStatsResponse as _machine_DiskStatsResponse, DiskStatsResponse__Output as _machine_DiskStatsResponse__Output } from '../machine/DiskStatsResponse.ts';
import type { DiskUsageInfo as _machine_DiskUsageInfo, DiskUsageInfo__Output as _machine_DiskUsageInfo__Output } from '../machine/DiskUsageInfo.ts';
import type { DiskUsageRequest as _machine_DiskUsageRequest, DiskUsageRequest__Output as _machine_DiskUsageRequest__Output } from '../machine/DiskUsageRequest.ts';
import type { DmesgRequest as _machine_DmesgRequest, DmesgRequest__Output as _machine_DmesgRequest__Output } from '../machine/DmesgRequest.ts';
import type { Empty as _google_protobuf_Empty, Empty__Output as _google_protobuf_Empty__Output } from '../google/protobuf/Empty.ts';
import type { EtcdAlarmDisarmResponse as _machine_EtcdAlarmDisarmResponse, EtcdAlarmDisarmResponse__Output as _machine_EtcdAlarmDisarmResponse__Output } from '../machine/EtcdAlarmDisarmResponse.ts';
import type { EtcdAlarmListResponse as _machine_EtcdAlarmListResponse, EtcdAlarmListResponse__Output as _machine_EtcdAlarmListResponse__Output } from '../machine/EtcdAlarmListResponse.ts';
import type { EtcdDefragmentResponse as _machine_EtcdDefragmentResponse, EtcdDefragmentResponse__Output as _machine_EtcdDefragmentResponse__Output } from '../machine/EtcdDefragmentResponse.ts';
import type { EtcdForfeitLeadershipRequest as _machine_EtcdForfeitLeadershipRequest, EtcdForfeitLeadershipRequest__Output as _machine_EtcdForfeitLeadershipRequest__Output } from '../machine/EtcdForfeitLeadershipRequest.ts';
import type { EtcdForfeitLeadershipResponse as _machine_EtcdForfeitLeadershipResponse, EtcdForfeitLeadershipResponse__Output as _machine_EtcdForfeitLeadershipResponse__Output } from '../machine/EtcdForfeitLeadershipResponse.ts';
import type { EtcdLeaveClusterRequest as _machine_EtcdLeaveClusterRequest, EtcdLeaveClusterRequest__Output as _machine_EtcdLeaveClusterRequest__Output } from '../machine/EtcdLeaveClusterRequest.ts';
import type { EtcdLeaveClusterResponse as _machine_EtcdLeaveClusterResponse, EtcdLeaveClusterResponse__Output as _machine_EtcdLeaveClusterResponse__Output } from '../machine/EtcdLeaveClusterResponse.ts';
import type { EtcdMemberListRequest as _machine_EtcdMemberListRequest, EtcdMemberListRequest__Output as _machine_EtcdMemberListRequest__Output } from '../machine/EtcdMemberListRequest.ts';
import type { EtcdMemberListResponse as _machine_EtcdMemberListResponse, EtcdMemberListResponse__Output as _machine_EtcdMemberListResponse__Output } from '../machine/EtcdMemberListResponse.ts';
import type { EtcdRecoverResponse as _machine_EtcdRecoverResponse, EtcdRecoverResponse__Output as _machine_EtcdRecoverResponse__Output } from '../machine/EtcdRecoverResponse.ts';
import type { EtcdRemoveMemberByIDRequest as _machine_EtcdRemoveMemberByIDRequest, EtcdRemoveMemberByIDRequest__Output as _machine_EtcdRemoveMemberByIDRequest__Output } from '../machine/EtcdRemoveMemberByIDRequest.ts';
import type { EtcdRemoveMemberByIDResponse as _machine_EtcdRemoveMemberByIDResponse, EtcdRemoveMemberByIDResponse__Output as _machine_EtcdRemoveMemberByIDResponse__Output } from '../machine/EtcdRemoveMemberByIDResponse.ts';
import type { EtcdSnapshotRequest as _machine_EtcdSnapshotRequest, EtcdSnapshotRequest__Output as _machine_EtcdSnapshotRequest__Output } from '../machine/EtcdSnapshotRequest.ts';
import type { EtcdStatusResponse as _machine_EtcdStatusResponse, EtcdStatusResponse__Output as _machine_EtcdStatusResponse__Output } from '../machine/EtcdStatusResponse.ts';
import type { Event as _machine_Event, Event__Output as _machine_Event__Output } from '../machine/Event.ts';
import type { EventsRequest as _machine_EventsRequest, EventsRequest__Output as _machine_EventsRequest__Output } from '../machine/EventsRequest.ts';
import type { FileInfo as _machine_FileInfo, FileInfo__Output as _machine_FileInfo__Output } from '../machine/FileInfo.ts';
import type { GenerateClientConfigurationRequest as _machine_GenerateClientConfigurationRequest, GenerateClientConfigurationRequest__Output as _machine_GenerateClientConfigurationRequest__Output } from '../machine/GenerateClientConfigurationRequest.ts';
import type { GenerateClientConfigurationResponse as _machine_GenerateClientConfigurationResponse, GenerateClientConfigurationResponse__Output as _machine_GenerateClientConfigurationResponse__Output } from '../machine/GenerateClientConfigurationResponse.ts';
import type { HostnameResponse as _machine_HostnameResponse, HostnameResponse__Output as _machine_HostnameResponse__Output } from '../machine/HostnameResponse.ts';
import type { InstallRequest as _machine_InstallRequest, InstallRequest__Output as _machine_InstallRequest__Output } from '../machine/InstallRequest.ts';
import type { ListRequest as _machine_ListRequest, ListRequest__Output as _machine_ListRequest__Output } from '../machine/ListRequest.ts';
import type { LoadAvgResponse as _machine_LoadAvgResponse, LoadAvgResponse__Output as _machine_LoadAvgResponse__Output } from '../machine/LoadAvgResponse.ts';
import type { LogsRequest as _machine_LogsRequest, LogsRequest__Output as _machine_LogsRequest__Output } from '../machine/LogsRequest.ts';
import type { MemoryResponse as _machine_MemoryResponse, MemoryResponse__Output as _machine_MemoryResponse__Output } from '../machine/MemoryResponse.ts';
import type { MetaDeleteRequest as _machine_MetaDeleteRequest, MetaDeleteRequest__Output as _machine_MetaDeleteRequest__Output } from '../machine/MetaDeleteRequest.ts';
import type { MetaDeleteResponse as _machine_MetaDeleteResponse, MetaDeleteResponse__Output as _machine_MetaDeleteResponse__Output } from '../machine/MetaDeleteResponse.ts';
import type { MetaWriteRequest as _machine_MetaWriteRequest, MetaWriteRequest__Output as _machine_MetaWriteRequest__Output } from '../machine/MetaWriteRequest.ts';
import type { MetaWriteResponse as _machine_MetaWriteResponse, MetaWriteResponse__Output as _machine_MetaWriteResponse__Output } from '../machine/MetaWriteResponse.ts';
import type { MountsResponse as _machine_MountsResponse, MountsResponse__Output as _machine_MountsResponse__Output } from '../machine/MountsResponse.ts';
import type { NetstatRequest as _machine_NetstatRequest, NetstatRequest__Output as _machine_NetstatRequest__Output } from '../machine/NetstatRequest.ts';
import type { NetstatResponse as _machine_NetstatResponse, NetstatResponse__Output as _machine_NetstatResponse__Output } from '../machine/NetstatResponse.ts';
import type { NetworkDeviceStatsResponse as _machine_NetworkDeviceStatsResponse, NetworkDeviceStatsResponse__Output as _machine_NetworkDeviceStatsResponse__Output } from '../machine/NetworkDeviceStatsResponse.ts';
import type { PacketCaptureRequest as _machine_PacketCaptureRequest, PacketCaptureRequest__Output as _machine_PacketCaptureRequest__Output } from '../machine/PacketCaptureRequest.ts';
import type { ProcessesResponse as _machine_ProcessesResponse, ProcessesResponse__Output as _machine_ProcessesResponse__Output } from '../machine/ProcessesResponse.ts';
import type { Progress as _machine_Progress, Progress__Output as _machine_Progress__Output } from '../machine/Progress.ts';
import type { ReadRequest as _machine_ReadRequest, ReadRequest__Output as _machine_ReadRequest__Output } from '../machine/ReadRequest.ts';
import type { RebootRequest as _machine_RebootRequest, RebootRequest__Output as _machine_RebootRequest__Output } from '../machine/RebootRequest.ts';
import type { RebootResponse as _machine_RebootResponse, RebootResponse__Output as _machine_RebootResponse__Output } from '../machine/RebootResponse.ts';
import type { RepairRequest as _machine_RepairRequest, RepairRequest__Output as _machine_RepairRequest__Output } from '../machine/RepairRequest.ts';
import type { ResetRequest as _machine_ResetRequest, ResetRequest__Output as _machine_ResetRequest__Output } from '../machine/ResetRequest.ts';
import type { ResetResponse as _machine_ResetResponse, ResetResponse__Output as _machine_ResetResponse__Output } from '../machine/ResetResponse.ts';
import type { RestartRequest as _machine_RestartRequest, RestartRequest__Output as _machine_RestartRequest__Output } from '../machine/RestartRequest.ts';
import type { RestartResponse as _machine_RestartResponse, RestartResponse__Output as _machine_RestartResponse__Output } from '../machine/RestartResponse.ts';
import type { RollbackRequest as _machine_RollbackRequest, RollbackRequest__Output as _machine_RollbackRequest__Output } from '../machine/RollbackRequest.ts';
import type { RollbackResponse as _machine_RollbackResponse, RollbackResponse__Output as _machine_RollbackResponse__Output } from '../machine/RollbackResponse.ts';
import type { ServiceListResponse as _machine_ServiceListResponse, ServiceListResponse__Output as _machine_ServiceListResponse__Output } from '../machine/ServiceListResponse.ts';
import type { ServiceRestartRequest as _machine_ServiceRestartRequest, ServiceRestartRequest__Output as _machine_ServiceRestartRequest__Output } from '../machine/ServiceRestartRequest.ts';
import type { ServiceRestartResponse as _machine_ServiceRestartResponse, ServiceRestartResponse__Output as _machine_ServiceRestartResponse__Output } from '../machine/ServiceRestartResponse.ts';
import type { ServiceStartRequest as _machine_ServiceStartRequest, ServiceStartRequest__Output as _machine_ServiceStartRequest__Output } from '../machine/ServiceStartRequest.ts';
import type { ServiceStartResponse as _machine_ServiceStartResponse, ServiceStartResponse__Output as _machine_ServiceStartResponse__Output } from '../machine/ServiceStartResponse.ts';
import type { ServiceStopRequest as _machine_ServiceStopRequest, ServiceStopRequest__Output as _machine_ServiceStopRequest__Output } from '../machine/ServiceStopRequest.ts';
import type { ServiceStopResponse as _machine_ServiceStopResponse, ServiceStopResponse__Output as _machine_ServiceStopResponse__Output } from '../machine/ServiceStopResponse.ts';
import type { ShutdownRequest as _machine_ShutdownRequest, ShutdownRequest__Output as _machine_ShutdownRequest__Output } from '../machine/ShutdownRequest.ts';
import type { ShutdownResponse as _machine_ShutdownResponse, ShutdownResponse__Output as _machine_ShutdownResponse__Output } from '../machine/ShutdownResponse.ts';
import type { StatsRequest as _machine_StatsRequest, StatsRequest__Output as _machine_StatsRequest__Output } from '../machine/StatsRequest.ts';
import type { StatsResponse as _machine_StatsResponse, StatsResponse__Output as _machine_StatsResponse__Output } from '../machine/StatsResponse.ts';
import type { SystemStatResponse as _machine_SystemStatResponse, SystemStatResponse__Output as _machine_SystemStatResponse__Output } from '../machine/SystemStatResponse.ts';
import type { UpgradeRequest as _machine_UpgradeRequest, UpgradeRequest__Output as _machine_UpgradeRequest__Output } from '../machine/UpgradeRequest.ts';
import type { UpgradeResponse as _machine_UpgradeResponse, UpgradeResponse__Output as _machine_UpgradeResponse__Output } from '../machine/UpgradeResponse.ts';
import type { UpgradeStreamRequest as _machine_UpgradeStreamRequest, UpgradeStreamRequest__Output as _machine_UpgradeStreamRequest__Output } from '../machine/UpgradeStreamRequest.ts';
import type { VersionResponse as _machine_VersionResponse, VersionResponse__Output as _machine_VersionResponse__Output } from '../machine/VersionResponse.ts';

export interface MachineServiceDefinition {
  ApplyConfiguration: MethodDefinition<_machine_ApplyConfigurationRequest, _machine_ApplyConfigurationResponse, _machine_ApplyConfigurationRequest__Output, _machine_ApplyConfigurationResponse__Output>
  Bootstrap: MethodDefinition<_machine_BootstrapRequest, _machine_BootstrapResponse, _machine_BootstrapRequest__Output, _machine_BootstrapResponse__Output>
  CPUFreqStats: MethodDefinition<_google_protobuf_Empty, _machine_CPUFreqStatsResponse, _google_protobuf_Empty__Output, _machine_CPUFreqStatsResponse__Output>
  CPUInfo: MethodDefinition<_google_protobuf_Empty, _machine_CPUInfoResponse, _google_protobuf_Empty__Output, _machine_CPUInfoResponse__Output>
  Containers: MethodDefinition<_machine_ContainersRequest, _machine_ContainersResponse, _machine_ContainersRequest__Output, _machine_ContainersResponse__Output>
  Copy: MethodDefinition<_machine_CopyRequest, _common_Data, _machine_CopyRequest__Output, _common_Data__Output>
  DiskStats: MethodDefinition<_google_protobuf_Empty, _machine_DiskStatsResponse, _google_protobuf_Empty__Output, _machine_DiskStatsResponse__Output>
  DiskUsage: MethodDefinition<_machine_DiskUsageRequest, _machine_DiskUsageInfo, _machine_DiskUsageRequest__Output, _machine_DiskUsageInfo__Output>
  Dmesg: MethodDefinition<_machine_DmesgRequest, _common_Data, _machine_DmesgRequest__Output, _common_Data__Output>
  EtcdAlarmDisarm: MethodDefinition<_google_protobuf_Empty, _machine_EtcdAlarmDisarmResponse, _google_protobuf_Empty__Output, _machine_EtcdAlarmDisarmResponse__Output>
  EtcdAlarmList: MethodDefinition<_google_protobuf_Empty, _machine_EtcdAlarmListResponse, _google_protobuf_Empty__Output, _machine_EtcdAlarmListResponse__Output>
  EtcdDefragment: MethodDefinition<_google_protobuf_Empty, _machine_EtcdDefragmentResponse, _google_protobuf_Empty__Output, _machine_EtcdDefragmentResponse__Output>
  EtcdForfeitLeadership: MethodDefinition<_machine_EtcdForfeitLeadershipRequest, _machine_EtcdForfeitLeadershipResponse, _machine_EtcdForfeitLeadershipRequest__Output, _machine_EtcdForfeitLeadershipResponse__Output>
  EtcdLeaveCluster: MethodDefinition<_machine_EtcdLeaveClusterRequest, _machine_EtcdLeaveClusterResponse, _machine_EtcdLeaveClusterRequest__Output, _machine_EtcdLeaveClusterResponse__Output>
  EtcdMemberList: MethodDefinition<_machine_EtcdMemberListRequest, _machine_EtcdMemberListResponse, _machine_EtcdMemberListRequest__Output, _machine_EtcdMemberListResponse__Output>
  EtcdRecover: MethodDefinition<_common_Data, _machine_EtcdRecoverResponse, _common_Data__Output, _machine_EtcdRecoverResponse__Output>
  EtcdRemoveMemberByID: MethodDefinition<_machine_EtcdRemoveMemberByIDRequest, _machine_EtcdRemoveMemberByIDResponse, _machine_EtcdRemoveMemberByIDRequest__Output, _machine_EtcdRemoveMemberByIDResponse__Output>
  EtcdSnapshot: MethodDefinition<_machine_EtcdSnapshotRequest, _common_Data, _machine_EtcdSnapshotRequest__Output, _common_Data__Output>
  EtcdStatus: MethodDefinition<_google_protobuf_Empty, _machine_EtcdStatusResponse, _google_protobuf_Empty__Output, _machine_EtcdStatusResponse__Output>
  Events: MethodDefinition<_machine_EventsRequest, _machine_Event, _machine_EventsRequest__Output, _machine_Event__Output>
  GenerateClientConfiguration: MethodDefinition<_machine_GenerateClientConfigurationRequest, _machine_GenerateClientConfigurationResponse, _machine_GenerateClientConfigurationRequest__Output, _machine_GenerateClientConfigurationResponse__Output>
  Hostname: MethodDefinition<_google_protobuf_Empty, _machine_HostnameResponse, _google_protobuf_Empty__Output, _machine_HostnameResponse__Output>
  Install: MethodDefinition<_machine_InstallRequest, _machine_Progress, _machine_InstallRequest__Output, _machine_Progress__Output>
  List: MethodDefinition<_machine_ListRequest, _machine_FileInfo, _machine_ListRequest__Output, _machine_FileInfo__Output>
  LoadAvg: MethodDefinition<_google_protobuf_Empty, _machine_LoadAvgResponse, _google_protobuf_Empty__Output, _machine_LoadAvgResponse__Output>
  Logs: MethodDefinition<_machine_LogsRequest, _common_Data, _machine_LogsRequest__Output, _common_Data__Output>
  Memory: MethodDefinition<_google_protobuf_Empty, _machine_MemoryResponse, _google_protobuf_Empty__Output, _machine_MemoryResponse__Output>
  MetaDelete: MethodDefinition<_machine_MetaDeleteRequest, _machine_MetaDeleteResponse, _machine_MetaDeleteRequest__Output, _machine_MetaDeleteResponse__Output>
  MetaWrite: MethodDefinition<_machine_MetaWriteRequest, _machine_MetaWriteResponse, _machine_MetaWriteRequest__Output, _machine_MetaWriteResponse__Output>
  Mounts: MethodDefinition<_google_protobuf_Empty, _machine_MountsResponse, _google_protobuf_Empty__Output, _machine_MountsResponse__Output>
  Netstat: MethodDefinition<_machine_NetstatRequest, _machine_NetstatResponse, _machine_NetstatRequest__Output, _machine_NetstatResponse__Output>
  NetworkDeviceStats: MethodDefinition<_google_protobuf_Empty, _machine_NetworkDeviceStatsResponse, _google_protobuf_Empty__Output, _machine_NetworkDeviceStatsResponse__Output>
  PacketCapture: MethodDefinition<_machine_PacketCaptureRequest, _common_Data, _machine_PacketCaptureRequest__Output, _common_Data__Output>
  Processes: MethodDefinition<_google_protobuf_Empty, _machine_ProcessesResponse, _google_protobuf_Empty__Output, _machine_ProcessesResponse__Output>
  Read: MethodDefinition<_machine_ReadRequest, _common_Data, _machine_ReadRequest__Output, _common_Data__Output>
  Reboot: MethodDefinition<_machine_RebootRequest, _machine_RebootResponse, _machine_RebootRequest__Output, _machine_RebootResponse__Output>
  Repair: MethodDefinition<_machine_RepairRequest, _machine_Progress, _machine_RepairRequest__Output, _machine_Progress__Output>
  Reset: MethodDefinition<_machine_ResetRequest, _machine_ResetResponse, _machine_ResetRequest__Output, _machine_ResetResponse__Output>
  Restart: MethodDefinition<_machine_RestartRequest, _machine_RestartResponse, _machine_RestartRequest__Output, _machine_RestartResponse__Output>
  Rollback: MethodDefinition<_machine_RollbackRequest, _machine_RollbackResponse, _machine_RollbackRequest__Output, _machine_RollbackResponse__Output>
  ServiceList: MethodDefinition<_google_protobuf_Empty, _machine_ServiceListResponse, _google_protobuf_Empty__Output, _machine_ServiceListResponse__Output>
  ServiceRestart: MethodDefinition<_machine_ServiceRestartRequest, _machine_ServiceRestartResponse, _machine_ServiceRestartRequest__Output, _machine_ServiceRestartResponse__Output>
  ServiceStart: MethodDefinition<_machine_ServiceStartRequest, _machine_ServiceStartResponse, _machine_ServiceStartRequest__Output, _machine_ServiceStartResponse__Output>
  ServiceStop: MethodDefinition<_machine_ServiceStopRequest, _machine_ServiceStopResponse, _machine_ServiceStopRequest__Output, _machine_ServiceStopResponse__Output>
  Shutdown: MethodDefinition<_machine_ShutdownRequest, _machine_ShutdownResponse, _machine_ShutdownRequest__Output, _machine_ShutdownResponse__Output>
  Stats: MethodDefinition<_machine_StatsRequest, _machine_StatsResponse, _machine_StatsRequest__Output, _machine_StatsResponse__Output>
  SystemStat: MethodDefinition<_google_protobuf_Empty, _machine_SystemStatResponse, _google_protobuf_Empty__Output, _machine_SystemStatResponse__Output>
  Upgrade: MethodDefinition<_machine_UpgradeRequest, _machine_UpgradeResponse, _machine_UpgradeRequest__Output, _machine_UpgradeResponse__Output>
  UpgradeStream: MethodDefinition<_machine_UpgradeStreamRequest, _machine_Progress, _machine_UpgradeStreamRequest__Output, _machine_Progress__Output>
  Version: MethodDefinition<_google_protobuf_Empty, _machine_VersionResponse, _google_protobuf_Empty__Output, _machine_VersionResponse__Output>
}
