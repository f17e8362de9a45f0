import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JobType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_TYPE_UNSPECIFIED: _ClassVar[JobType]
    JOB_TYPE_BATCH: _ClassVar[JobType]
    JOB_TYPE_SERVICE: _ClassVar[JobType]
    JOB_TYPE_STATEFUL: _ClassVar[JobType]
    JOB_TYPE_DAEMON: _ClassVar[JobType]

class ConstraintOp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONSTRAINT_OP_UNSPECIFIED: _ClassVar[ConstraintOp]
    CONSTRAINT_OP_EQUALS: _ClassVar[ConstraintOp]
    CONSTRAINT_OP_NOT_EQUALS: _ClassVar[ConstraintOp]
    CONSTRAINT_OP_IN: _ClassVar[ConstraintOp]
    CONSTRAINT_OP_NOT_IN: _ClassVar[ConstraintOp]
    CONSTRAINT_OP_EXISTS: _ClassVar[ConstraintOp]
    CONSTRAINT_OP_NOT_EXISTS: _ClassVar[ConstraintOp]

class PullPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PULL_POLICY_UNSPECIFIED: _ClassVar[PullPolicy]
    PULL_POLICY_IF_NOT_PRESENT: _ClassVar[PullPolicy]
    PULL_POLICY_ALWAYS: _ClassVar[PullPolicy]
    PULL_POLICY_NEVER: _ClassVar[PullPolicy]

class ConcurrencyPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONCURRENCY_POLICY_UNSPECIFIED: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_ALLOW: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_FORBID: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_REPLACE: _ClassVar[ConcurrencyPolicy]

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    JOB_STATE_INITIALIZED: _ClassVar[JobState]
    JOB_STATE_PENDING: _ClassVar[JobState]
    JOB_STATE_RUNNING: _ClassVar[JobState]
    JOB_STATE_KILLING: _ClassVar[JobState]
    JOB_STATE_SUCCEEDED: _ClassVar[JobState]
    JOB_STATE_FAILED: _ClassVar[JobState]
    JOB_STATE_KILLED: _ClassVar[JobState]

class TaskState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STATE_UNSPECIFIED: _ClassVar[TaskState]
    TASK_STATE_INITIALIZED: _ClassVar[TaskState]
    TASK_STATE_PENDING: _ClassVar[TaskState]
    TASK_STATE_READY: _ClassVar[TaskState]
    TASK_STATE_PLACING: _ClassVar[TaskState]
    TASK_STATE_PLACED: _ClassVar[TaskState]
    TASK_STATE_LAUNCHING: _ClassVar[TaskState]
    TASK_STATE_RUNNING: _ClassVar[TaskState]
    TASK_STATE_SUCCEEDED: _ClassVar[TaskState]
    TASK_STATE_FAILED: _ClassVar[TaskState]
    TASK_STATE_KILLED: _ClassVar[TaskState]
    TASK_STATE_LOST: _ClassVar[TaskState]

class HealthState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HEALTH_STATE_UNSPECIFIED: _ClassVar[HealthState]
    HEALTH_STATE_UNKNOWN: _ClassVar[HealthState]
    HEALTH_STATE_HEALTHY: _ClassVar[HealthState]
    HEALTH_STATE_UNHEALTHY: _ClassVar[HealthState]

class UpdateState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UPDATE_STATE_UNSPECIFIED: _ClassVar[UpdateState]
    UPDATE_STATE_ROLLING_FORWARD: _ClassVar[UpdateState]
    UPDATE_STATE_SUCCEEDED: _ClassVar[UpdateState]
    UPDATE_STATE_ABORTED: _ClassVar[UpdateState]
    UPDATE_STATE_ROLLING_BACK: _ClassVar[UpdateState]
    UPDATE_STATE_ROLLED_BACK: _ClassVar[UpdateState]
    UPDATE_STATE_FAILED: _ClassVar[UpdateState]

class HostState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOST_STATE_UNSPECIFIED: _ClassVar[HostState]
    HOST_STATE_UP: _ClassVar[HostState]
    HOST_STATE_DRAINING: _ClassVar[HostState]
    HOST_STATE_DOWN: _ClassVar[HostState]
    HOST_STATE_DRAINED: _ClassVar[HostState]

class HostPoolMovePhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOST_POOL_MOVE_PHASE_UNSPECIFIED: _ClassVar[HostPoolMovePhase]
    HOST_POOL_MOVE_PHASE_DRAINING: _ClassVar[HostPoolMovePhase]
    HOST_POOL_MOVE_PHASE_MOVED: _ClassVar[HostPoolMovePhase]
    HOST_POOL_MOVE_PHASE_CANCELLED: _ClassVar[HostPoolMovePhase]

class MigrationState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MIGRATION_STATE_UNSPECIFIED: _ClassVar[MigrationState]
    MIGRATION_STATE_MIGRATING: _ClassVar[MigrationState]
    MIGRATION_STATE_ROLLING_BACK: _ClassVar[MigrationState]
    MIGRATION_STATE_SUCCEEDED: _ClassVar[MigrationState]
    MIGRATION_STATE_ROLLED_BACK: _ClassVar[MigrationState]
    MIGRATION_STATE_ABORTED: _ClassVar[MigrationState]
    MIGRATION_STATE_FAILED: _ClassVar[MigrationState]
JOB_TYPE_UNSPECIFIED: JobType
JOB_TYPE_BATCH: JobType
JOB_TYPE_SERVICE: JobType
JOB_TYPE_STATEFUL: JobType
JOB_TYPE_DAEMON: JobType
CONSTRAINT_OP_UNSPECIFIED: ConstraintOp
CONSTRAINT_OP_EQUALS: ConstraintOp
CONSTRAINT_OP_NOT_EQUALS: ConstraintOp
CONSTRAINT_OP_IN: ConstraintOp
CONSTRAINT_OP_NOT_IN: ConstraintOp
CONSTRAINT_OP_EXISTS: ConstraintOp
CONSTRAINT_OP_NOT_EXISTS: ConstraintOp
PULL_POLICY_UNSPECIFIED: PullPolicy
PULL_POLICY_IF_NOT_PRESENT: PullPolicy
PULL_POLICY_ALWAYS: PullPolicy
PULL_POLICY_NEVER: PullPolicy
CONCURRENCY_POLICY_UNSPECIFIED: ConcurrencyPolicy
CONCURRENCY_POLICY_ALLOW: ConcurrencyPolicy
CONCURRENCY_POLICY_FORBID: ConcurrencyPolicy
CONCURRENCY_POLICY_REPLACE: ConcurrencyPolicy
JOB_STATE_UNSPECIFIED: JobState
JOB_STATE_INITIALIZED: JobState
JOB_STATE_PENDING: JobState
JOB_STATE_RUNNING: JobState
JOB_STATE_KILLING: JobState
JOB_STATE_SUCCEEDED: JobState
JOB_STATE_FAILED: JobState
JOB_STATE_KILLED: JobState
TASK_STATE_UNSPECIFIED: TaskState
TASK_STATE_INITIALIZED: TaskState
TASK_STATE_PENDING: TaskState
TASK_STATE_READY: TaskState
TASK_STATE_PLACING: TaskState
TASK_STATE_PLACED: TaskState
TASK_STATE_LAUNCHING: TaskState
TASK_STATE_RUNNING: TaskState
TASK_STATE_SUCCEEDED: TaskState
TASK_STATE_FAILED: TaskState
TASK_STATE_KILLED: TaskState
TASK_STATE_LOST: TaskState
HEALTH_STATE_UNSPECIFIED: HealthState
HEALTH_STATE_UNKNOWN: HealthState
HEALTH_STATE_HEALTHY: HealthState
HEALTH_STATE_UNHEALTHY: HealthState
UPDATE_STATE_UNSPECIFIED: UpdateState
UPDATE_STATE_ROLLING_FORWARD: UpdateState
UPDATE_STATE_SUCCEEDED: UpdateState
UPDATE_STATE_ABORTED: UpdateState
UPDATE_STATE_ROLLING_BACK: UpdateState
UPDATE_STATE_ROLLED_BACK: UpdateState
UPDATE_STATE_FAILED: UpdateState
HOST_STATE_UNSPECIFIED: HostState
HOST_STATE_UP: HostState
HOST_STATE_DRAINING: HostState
HOST_STATE_DOWN: HostState
HOST_STATE_DRAINED: HostState
HOST_POOL_MOVE_PHASE_UNSPECIFIED: HostPoolMovePhase
HOST_POOL_MOVE_PHASE_DRAINING: HostPoolMovePhase
HOST_POOL_MOVE_PHASE_MOVED: HostPoolMovePhase
HOST_POOL_MOVE_PHASE_CANCELLED: HostPoolMovePhase
MIGRATION_STATE_UNSPECIFIED: MigrationState
MIGRATION_STATE_MIGRATING: MigrationState
MIGRATION_STATE_ROLLING_BACK: MigrationState
MIGRATION_STATE_SUCCEEDED: MigrationState
MIGRATION_STATE_ROLLED_BACK: MigrationState
MIGRATION_STATE_ABORTED: MigrationState
MIGRATION_STATE_FAILED: MigrationState

class Resources(_message.Message):
    __slots__ = ("cpu", "mem_mb", "disk_mb", "gpu")
    CPU_FIELD_NUMBER: _ClassVar[int]
    MEM_MB_FIELD_NUMBER: _ClassVar[int]
    DISK_MB_FIELD_NUMBER: _ClassVar[int]
    GPU_FIELD_NUMBER: _ClassVar[int]
    cpu: float
    mem_mb: float
    disk_mb: float
    gpu: float
    def __init__(self, cpu: _Optional[float] = ..., mem_mb: _Optional[float] = ..., disk_mb: _Optional[float] = ..., gpu: _Optional[float] = ...) -> None: ...

class Constraint(_message.Message):
    __slots__ = ("key", "op", "values", "all_of", "any_of")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    ALL_OF_FIELD_NUMBER: _ClassVar[int]
    ANY_OF_FIELD_NUMBER: _ClassVar[int]
    key: str
    op: ConstraintOp
    values: _containers.RepeatedScalarFieldContainer[str]
    all_of: _containers.RepeatedCompositeFieldContainer[Constraint]
    any_of: _containers.RepeatedCompositeFieldContainer[Constraint]
    def __init__(self, key: _Optional[str] = ..., op: _Optional[_Union[ConstraintOp, str]] = ..., values: _Optional[_Iterable[str]] = ..., all_of: _Optional[_Iterable[_Union[Constraint, _Mapping]]] = ..., any_of: _Optional[_Iterable[_Union[Constraint, _Mapping]]] = ...) -> None: ...

class TaskSpec(_message.Message):
    __slots__ = ("command", "args", "env", "resources", "constraints", "kill_grace_period_seconds", "container", "ports", "health_check", "readiness", "volumes")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    KILL_GRACE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    HEALTH_CHECK_FIELD_NUMBER: _ClassVar[int]
    READINESS_FIELD_NUMBER: _ClassVar[int]
    VOLUMES_FIELD_NUMBER: _ClassVar[int]
    command: str
    args: _containers.RepeatedScalarFieldContainer[str]
    env: _containers.ScalarMap[str, str]
    resources: Resources
    constraints: _containers.RepeatedCompositeFieldContainer[Constraint]
    kill_grace_period_seconds: int
    container: Container
    ports: _containers.RepeatedCompositeFieldContainer[PortSpec]
    health_check: HealthCheck
    readiness: HealthCheck
    volumes: _containers.RepeatedCompositeFieldContainer[Volume]
    def __init__(self, command: _Optional[str] = ..., args: _Optional[_Iterable[str]] = ..., env: _Optional[_Mapping[str, str]] = ..., resources: _Optional[_Union[Resources, _Mapping]] = ..., constraints: _Optional[_Iterable[_Union[Constraint, _Mapping]]] = ..., kill_grace_period_seconds: _Optional[int] = ..., container: _Optional[_Union[Container, _Mapping]] = ..., ports: _Optional[_Iterable[_Union[PortSpec, _Mapping]]] = ..., health_check: _Optional[_Union[HealthCheck, _Mapping]] = ..., readiness: _Optional[_Union[HealthCheck, _Mapping]] = ..., volumes: _Optional[_Iterable[_Union[Volume, _Mapping]]] = ...) -> None: ...

class Container(_message.Message):
    __slots__ = ("image", "pull_policy")
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    PULL_POLICY_FIELD_NUMBER: _ClassVar[int]
    image: str
    pull_policy: PullPolicy
    def __init__(self, image: _Optional[str] = ..., pull_policy: _Optional[_Union[PullPolicy, str]] = ...) -> None: ...

class PortSpec(_message.Message):
    __slots__ = ("name", "port")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    name: str
    port: int
    def __init__(self, name: _Optional[str] = ..., port: _Optional[int] = ...) -> None: ...

class HealthCheck(_message.Message):
    __slots__ = ("command", "http", "tcp", "initial_delay", "interval", "timeout", "failure_threshold")
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    HTTP_FIELD_NUMBER: _ClassVar[int]
    TCP_FIELD_NUMBER: _ClassVar[int]
    INITIAL_DELAY_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    command: _containers.RepeatedScalarFieldContainer[str]
    http: HTTPProbe
    tcp: TCPProbe
    initial_delay: _duration_pb2.Duration
    interval: _duration_pb2.Duration
    timeout: _duration_pb2.Duration
    failure_threshold: int
    def __init__(self, command: _Optional[_Iterable[str]] = ..., http: _Optional[_Union[HTTPProbe, _Mapping]] = ..., tcp: _Optional[_Union[TCPProbe, _Mapping]] = ..., initial_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., failure_threshold: _Optional[int] = ...) -> None: ...

class HTTPProbe(_message.Message):
    __slots__ = ("port", "path")
    PORT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    port: str
    path: str
    def __init__(self, port: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class TCPProbe(_message.Message):
    __slots__ = ("port",)
    PORT_FIELD_NUMBER: _ClassVar[int]
    port: str
    def __init__(self, port: _Optional[str] = ...) -> None: ...

class Volume(_message.Message):
    __slots__ = ("name", "size_mb", "path")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIZE_MB_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    name: str
    size_mb: int
    path: str
    def __init__(self, name: _Optional[str] = ..., size_mb: _Optional[int] = ..., path: _Optional[str] = ...) -> None: ...

class SpreadSpec(_message.Message):
    __slots__ = ("label", "max")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    label: str
    max: int
    def __init__(self, label: _Optional[str] = ..., max: _Optional[int] = ...) -> None: ...

class JobSpec(_message.Message):
    __slots__ = ("name", "type", "pool", "region", "priority", "preemptible", "instances", "max_running", "max_attempts", "task", "labels", "gang_size", "gang_restart", "revocable", "failover", "overrides", "max_per_host", "spread", "sla", "clusters", "schedule")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PREEMPTIBLE_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    MAX_RUNNING_FIELD_NUMBER: _ClassVar[int]
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    GANG_SIZE_FIELD_NUMBER: _ClassVar[int]
    GANG_RESTART_FIELD_NUMBER: _ClassVar[int]
    REVOCABLE_FIELD_NUMBER: _ClassVar[int]
    FAILOVER_FIELD_NUMBER: _ClassVar[int]
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_HOST_FIELD_NUMBER: _ClassVar[int]
    SPREAD_FIELD_NUMBER: _ClassVar[int]
    SLA_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: JobType
    pool: str
    region: str
    priority: int
    preemptible: bool
    instances: int
    max_running: int
    max_attempts: int
    task: TaskSpec
    labels: _containers.ScalarMap[str, str]
    gang_size: int
    gang_restart: bool
    revocable: bool
    failover: FailoverPolicy
    overrides: _containers.RepeatedCompositeFieldContainer[InstanceOverride]
    max_per_host: int
    spread: _containers.RepeatedCompositeFieldContainer[SpreadSpec]
    sla: SLA
    clusters: ClusterPolicy
    schedule: Schedule
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[JobType, str]] = ..., pool: _Optional[str] = ..., region: _Optional[str] = ..., priority: _Optional[int] = ..., preemptible: _Optional[bool] = ..., instances: _Optional[int] = ..., max_running: _Optional[int] = ..., max_attempts: _Optional[int] = ..., task: _Optional[_Union[TaskSpec, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., gang_size: _Optional[int] = ..., gang_restart: _Optional[bool] = ..., revocable: _Optional[bool] = ..., failover: _Optional[_Union[FailoverPolicy, _Mapping]] = ..., overrides: _Optional[_Iterable[_Union[InstanceOverride, _Mapping]]] = ..., max_per_host: _Optional[int] = ..., spread: _Optional[_Iterable[_Union[SpreadSpec, _Mapping]]] = ..., sla: _Optional[_Union[SLA, _Mapping]] = ..., clusters: _Optional[_Union[ClusterPolicy, _Mapping]] = ..., schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class Schedule(_message.Message):
    __slots__ = ("cron", "time_zone", "concurrency_policy", "starting_deadline_seconds", "keep_runs")
    CRON_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_POLICY_FIELD_NUMBER: _ClassVar[int]
    STARTING_DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    KEEP_RUNS_FIELD_NUMBER: _ClassVar[int]
    cron: str
    time_zone: str
    concurrency_policy: ConcurrencyPolicy
    starting_deadline_seconds: int
    keep_runs: int
    def __init__(self, cron: _Optional[str] = ..., time_zone: _Optional[str] = ..., concurrency_policy: _Optional[_Union[ConcurrencyPolicy, str]] = ..., starting_deadline_seconds: _Optional[int] = ..., keep_runs: _Optional[int] = ...) -> None: ...

class PeriodicStatus(_message.Message):
    __slots__ = ("suspended", "next_run_time", "last_tick_time", "last_run_id", "launched", "skipped", "missed", "active_runs")
    SUSPENDED_FIELD_NUMBER: _ClassVar[int]
    NEXT_RUN_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_TICK_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LAUNCHED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    MISSED_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_RUNS_FIELD_NUMBER: _ClassVar[int]
    suspended: bool
    next_run_time: _timestamp_pb2.Timestamp
    last_tick_time: _timestamp_pb2.Timestamp
    last_run_id: str
    launched: int
    skipped: int
    missed: int
    active_runs: int
    def __init__(self, suspended: _Optional[bool] = ..., next_run_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_tick_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_run_id: _Optional[str] = ..., launched: _Optional[int] = ..., skipped: _Optional[int] = ..., missed: _Optional[int] = ..., active_runs: _Optional[int] = ...) -> None: ...

class RunOf(_message.Message):
    __slots__ = ("job_id", "tick_time")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TICK_TIME_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    tick_time: _timestamp_pb2.Timestamp
    def __init__(self, job_id: _Optional[str] = ..., tick_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ClusterPolicy(_message.Message):
    __slots__ = ("prefer", "avoid")
    PREFER_FIELD_NUMBER: _ClassVar[int]
    AVOID_FIELD_NUMBER: _ClassVar[int]
    prefer: _containers.RepeatedScalarFieldContainer[str]
    avoid: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, prefer: _Optional[_Iterable[str]] = ..., avoid: _Optional[_Iterable[str]] = ...) -> None: ...

class SLA(_message.Message):
    __slots__ = ("max_unavailable",)
    MAX_UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    max_unavailable: str
    def __init__(self, max_unavailable: _Optional[str] = ...) -> None: ...

class InstanceOverride(_message.Message):
    __slots__ = ("instances", "task")
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    instances: str
    task: TaskSpec
    def __init__(self, instances: _Optional[str] = ..., task: _Optional[_Union[TaskSpec, _Mapping]] = ...) -> None: ...

class FailoverPolicy(_message.Message):
    __slots__ = ("mode", "regions")
    class Mode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        MODE_UNSPECIFIED: _ClassVar[FailoverPolicy.Mode]
        MODE_NONE: _ClassVar[FailoverPolicy.Mode]
        MODE_ANY: _ClassVar[FailoverPolicy.Mode]
        MODE_REGIONS: _ClassVar[FailoverPolicy.Mode]
    MODE_UNSPECIFIED: FailoverPolicy.Mode
    MODE_NONE: FailoverPolicy.Mode
    MODE_ANY: FailoverPolicy.Mode
    MODE_REGIONS: FailoverPolicy.Mode
    MODE_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    mode: FailoverPolicy.Mode
    regions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, mode: _Optional[_Union[FailoverPolicy.Mode, str]] = ..., regions: _Optional[_Iterable[str]] = ...) -> None: ...

class JobStatus(_message.Message):
    __slots__ = ("state", "task_states", "create_time", "start_time", "completion_time", "region", "message", "update_id", "moved_to", "moved_from", "waiting", "periodic", "run_of")
    class TaskStatesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    STATE_FIELD_NUMBER: _ClassVar[int]
    TASK_STATES_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TIME_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    MOVED_TO_FIELD_NUMBER: _ClassVar[int]
    MOVED_FROM_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    PERIODIC_FIELD_NUMBER: _ClassVar[int]
    RUN_OF_FIELD_NUMBER: _ClassVar[int]
    state: JobState
    task_states: _containers.ScalarMap[str, int]
    create_time: _timestamp_pb2.Timestamp
    start_time: _timestamp_pb2.Timestamp
    completion_time: _timestamp_pb2.Timestamp
    region: str
    message: str
    update_id: str
    moved_to: JobMove
    moved_from: JobMove
    waiting: _containers.RepeatedCompositeFieldContainer[WaitingTasks]
    periodic: PeriodicStatus
    run_of: RunOf
    def __init__(self, state: _Optional[_Union[JobState, str]] = ..., task_states: _Optional[_Mapping[str, int]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completion_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., region: _Optional[str] = ..., message: _Optional[str] = ..., update_id: _Optional[str] = ..., moved_to: _Optional[_Union[JobMove, _Mapping]] = ..., moved_from: _Optional[_Union[JobMove, _Mapping]] = ..., waiting: _Optional[_Iterable[_Union[WaitingTasks, _Mapping]]] = ..., periodic: _Optional[_Union[PeriodicStatus, _Mapping]] = ..., run_of: _Optional[_Union[RunOf, _Mapping]] = ...) -> None: ...

class JobMove(_message.Message):
    __slots__ = ("region", "job_id", "time")
    REGION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    region: str
    job_id: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, region: _Optional[str] = ..., job_id: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WaitingTasks(_message.Message):
    __slots__ = ("tasks", "reason")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    tasks: int
    reason: str
    def __init__(self, tasks: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("id", "spec", "status", "config_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    spec: JobSpec
    status: JobStatus
    config_version: int
    def __init__(self, id: _Optional[str] = ..., spec: _Optional[_Union[JobSpec, _Mapping]] = ..., status: _Optional[_Union[JobStatus, _Mapping]] = ..., config_version: _Optional[int] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("job_id", "instance", "state", "goal_state", "run", "host", "cluster", "reason", "message", "exit_code", "start_time", "completion_time", "update_time", "retry_after", "config_version", "health", "ready", "ports", "pinned_host")
    class PortsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    GOAL_STATE_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_FIELD_NUMBER: _ClassVar[int]
    CONFIG_VERSION_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    PINNED_HOST_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    instance: int
    state: TaskState
    goal_state: TaskState
    run: int
    host: str
    cluster: str
    reason: str
    message: str
    exit_code: int
    start_time: _timestamp_pb2.Timestamp
    completion_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    retry_after: _timestamp_pb2.Timestamp
    config_version: int
    health: HealthState
    ready: HealthState
    ports: _containers.ScalarMap[str, int]
    pinned_host: str
    def __init__(self, job_id: _Optional[str] = ..., instance: _Optional[int] = ..., state: _Optional[_Union[TaskState, str]] = ..., goal_state: _Optional[_Union[TaskState, str]] = ..., run: _Optional[int] = ..., host: _Optional[str] = ..., cluster: _Optional[str] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., exit_code: _Optional[int] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completion_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., retry_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., config_version: _Optional[int] = ..., health: _Optional[_Union[HealthState, str]] = ..., ready: _Optional[_Union[HealthState, str]] = ..., ports: _Optional[_Mapping[str, int]] = ..., pinned_host: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("seq", "time", "job_id", "job", "task", "host_pool_move")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    HOST_POOL_MOVE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    time: _timestamp_pb2.Timestamp
    job_id: str
    job: JobStatus
    task: Task
    host_pool_move: HostPoolMove
    def __init__(self, seq: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., job_id: _Optional[str] = ..., job: _Optional[_Union[JobStatus, _Mapping]] = ..., task: _Optional[_Union[Task, _Mapping]] = ..., host_pool_move: _Optional[_Union[HostPoolMove, _Mapping]] = ...) -> None: ...

class Update(_message.Message):
    __slots__ = ("id", "job_id", "from_version", "to_version", "batch_size", "state", "instances_total", "instances_done", "create_time", "completion_time", "message", "instances_failed", "max_failures", "rollback_on_failure", "paused", "min_healthy_seconds", "in_place", "instances_in_flight", "canary", "auto_promote_after_seconds", "promoted", "promoted_by", "canary_extra")
    ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    TO_VERSION_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_DONE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TIME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FAILED_FIELD_NUMBER: _ClassVar[int]
    MAX_FAILURES_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_ON_FAILURE_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    MIN_HEALTHY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    CANARY_FIELD_NUMBER: _ClassVar[int]
    AUTO_PROMOTE_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PROMOTED_FIELD_NUMBER: _ClassVar[int]
    PROMOTED_BY_FIELD_NUMBER: _ClassVar[int]
    CANARY_EXTRA_FIELD_NUMBER: _ClassVar[int]
    id: str
    job_id: str
    from_version: int
    to_version: int
    batch_size: int
    state: UpdateState
    instances_total: int
    instances_done: int
    create_time: _timestamp_pb2.Timestamp
    completion_time: _timestamp_pb2.Timestamp
    message: str
    instances_failed: int
    max_failures: int
    rollback_on_failure: bool
    paused: bool
    min_healthy_seconds: int
    in_place: bool
    instances_in_flight: int
    canary: int
    auto_promote_after_seconds: int
    promoted: bool
    promoted_by: str
    canary_extra: bool
    def __init__(self, id: _Optional[str] = ..., job_id: _Optional[str] = ..., from_version: _Optional[int] = ..., to_version: _Optional[int] = ..., batch_size: _Optional[int] = ..., state: _Optional[_Union[UpdateState, str]] = ..., instances_total: _Optional[int] = ..., instances_done: _Optional[int] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completion_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[str] = ..., instances_failed: _Optional[int] = ..., max_failures: _Optional[int] = ..., rollback_on_failure: _Optional[bool] = ..., paused: _Optional[bool] = ..., min_healthy_seconds: _Optional[int] = ..., in_place: _Optional[bool] = ..., instances_in_flight: _Optional[int] = ..., canary: _Optional[int] = ..., auto_promote_after_seconds: _Optional[int] = ..., promoted: _Optional[bool] = ..., promoted_by: _Optional[str] = ..., canary_extra: _Optional[bool] = ...) -> None: ...

class ResourceAmounts(_message.Message):
    __slots__ = ("cpu", "mem_mb", "disk_mb", "gpu")
    CPU_FIELD_NUMBER: _ClassVar[int]
    MEM_MB_FIELD_NUMBER: _ClassVar[int]
    DISK_MB_FIELD_NUMBER: _ClassVar[int]
    GPU_FIELD_NUMBER: _ClassVar[int]
    cpu: float
    mem_mb: float
    disk_mb: float
    gpu: float
    def __init__(self, cpu: _Optional[float] = ..., mem_mb: _Optional[float] = ..., disk_mb: _Optional[float] = ..., gpu: _Optional[float] = ...) -> None: ...

class PoolSpec(_message.Message):
    __slots__ = ("path", "reservation", "limit", "share", "host_pools", "clusters")
    PATH_FIELD_NUMBER: _ClassVar[int]
    RESERVATION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SHARE_FIELD_NUMBER: _ClassVar[int]
    HOST_POOLS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    path: str
    reservation: Resources
    limit: ResourceAmounts
    share: ResourceAmounts
    host_pools: _containers.RepeatedScalarFieldContainer[str]
    clusters: ClusterPolicy
    def __init__(self, path: _Optional[str] = ..., reservation: _Optional[_Union[Resources, _Mapping]] = ..., limit: _Optional[_Union[ResourceAmounts, _Mapping]] = ..., share: _Optional[_Union[ResourceAmounts, _Mapping]] = ..., host_pools: _Optional[_Iterable[str]] = ..., clusters: _Optional[_Union[ClusterPolicy, _Mapping]] = ...) -> None: ...

class PoolResource(_message.Message):
    __slots__ = ("name", "reservation", "limit", "share", "demand", "allocation", "entitlement", "uncapped_demand")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESERVATION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SHARE_FIELD_NUMBER: _ClassVar[int]
    DEMAND_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_FIELD_NUMBER: _ClassVar[int]
    ENTITLEMENT_FIELD_NUMBER: _ClassVar[int]
    UNCAPPED_DEMAND_FIELD_NUMBER: _ClassVar[int]
    name: str
    reservation: float
    limit: float
    share: float
    demand: float
    allocation: float
    entitlement: float
    uncapped_demand: float
    def __init__(self, name: _Optional[str] = ..., reservation: _Optional[float] = ..., limit: _Optional[float] = ..., share: _Optional[float] = ..., demand: _Optional[float] = ..., allocation: _Optional[float] = ..., entitlement: _Optional[float] = ..., uncapped_demand: _Optional[float] = ...) -> None: ...

class Pool(_message.Message):
    __slots__ = ("path", "resources", "children", "jobs", "spec", "regions", "pending_tasks", "running_tasks")
    PATH_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    PENDING_TASKS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    path: str
    resources: _containers.RepeatedCompositeFieldContainer[PoolResource]
    children: _containers.RepeatedScalarFieldContainer[str]
    jobs: int
    spec: PoolSpec
    regions: _containers.RepeatedCompositeFieldContainer[PoolRegionShare]
    pending_tasks: int
    running_tasks: int
    def __init__(self, path: _Optional[str] = ..., resources: _Optional[_Iterable[_Union[PoolResource, _Mapping]]] = ..., children: _Optional[_Iterable[str]] = ..., jobs: _Optional[int] = ..., spec: _Optional[_Union[PoolSpec, _Mapping]] = ..., regions: _Optional[_Iterable[_Union[PoolRegionShare, _Mapping]]] = ..., pending_tasks: _Optional[int] = ..., running_tasks: _Optional[int] = ...) -> None: ...

class PoolRegionShare(_message.Message):
    __slots__ = ("region", "reservation", "limit", "demand")
    REGION_FIELD_NUMBER: _ClassVar[int]
    RESERVATION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    DEMAND_FIELD_NUMBER: _ClassVar[int]
    region: str
    reservation: Resources
    limit: Resources
    demand: Resources
    def __init__(self, region: _Optional[str] = ..., reservation: _Optional[_Union[Resources, _Mapping]] = ..., limit: _Optional[_Union[Resources, _Mapping]] = ..., demand: _Optional[_Union[Resources, _Mapping]] = ...) -> None: ...

class Host(_message.Message):
    __slots__ = ("id", "hostname", "cluster", "kind", "state", "capacity", "allocated", "labels", "tasks", "draining", "drain_reason", "drain_time", "last_seen", "drain_deadline", "region", "port_ranges", "runs_images", "ports_allocated", "host_pool", "host_pool_target")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATED_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    DRAIN_REASON_FIELD_NUMBER: _ClassVar[int]
    DRAIN_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_SEEN_FIELD_NUMBER: _ClassVar[int]
    DRAIN_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    PORT_RANGES_FIELD_NUMBER: _ClassVar[int]
    RUNS_IMAGES_FIELD_NUMBER: _ClassVar[int]
    PORTS_ALLOCATED_FIELD_NUMBER: _ClassVar[int]
    HOST_POOL_FIELD_NUMBER: _ClassVar[int]
    HOST_POOL_TARGET_FIELD_NUMBER: _ClassVar[int]
    id: str
    hostname: str
    cluster: str
    kind: str
    state: HostState
    capacity: Resources
    allocated: Resources
    labels: _containers.ScalarMap[str, str]
    tasks: int
    draining: bool
    drain_reason: str
    drain_time: _timestamp_pb2.Timestamp
    last_seen: _timestamp_pb2.Timestamp
    drain_deadline: _timestamp_pb2.Timestamp
    region: str
    port_ranges: _containers.RepeatedScalarFieldContainer[str]
    runs_images: bool
    ports_allocated: int
    host_pool: str
    host_pool_target: str
    def __init__(self, id: _Optional[str] = ..., hostname: _Optional[str] = ..., cluster: _Optional[str] = ..., kind: _Optional[str] = ..., state: _Optional[_Union[HostState, str]] = ..., capacity: _Optional[_Union[Resources, _Mapping]] = ..., allocated: _Optional[_Union[Resources, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., tasks: _Optional[int] = ..., draining: _Optional[bool] = ..., drain_reason: _Optional[str] = ..., drain_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_seen: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., drain_deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., region: _Optional[str] = ..., port_ranges: _Optional[_Iterable[str]] = ..., runs_images: _Optional[bool] = ..., ports_allocated: _Optional[int] = ..., host_pool: _Optional[str] = ..., host_pool_target: _Optional[str] = ...) -> None: ...

class HostPool(_message.Message):
    __slots__ = ("name", "region", "hosts", "in_service", "floor", "capacity", "allocated", "demand", "moving", "policy_period")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    IN_SERVICE_FIELD_NUMBER: _ClassVar[int]
    FLOOR_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATED_FIELD_NUMBER: _ClassVar[int]
    DEMAND_FIELD_NUMBER: _ClassVar[int]
    MOVING_FIELD_NUMBER: _ClassVar[int]
    POLICY_PERIOD_FIELD_NUMBER: _ClassVar[int]
    name: str
    region: str
    hosts: _containers.RepeatedScalarFieldContainer[str]
    in_service: int
    floor: int
    capacity: Resources
    allocated: Resources
    demand: Resources
    moving: _containers.RepeatedScalarFieldContainer[str]
    policy_period: _duration_pb2.Duration
    def __init__(self, name: _Optional[str] = ..., region: _Optional[str] = ..., hosts: _Optional[_Iterable[str]] = ..., in_service: _Optional[int] = ..., floor: _Optional[int] = ..., capacity: _Optional[_Union[Resources, _Mapping]] = ..., allocated: _Optional[_Union[Resources, _Mapping]] = ..., demand: _Optional[_Union[Resources, _Mapping]] = ..., moving: _Optional[_Iterable[str]] = ..., policy_period: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class HostPoolMove(_message.Message):
    __slots__ = ("host_id", "to", "phase", "reason", "waited", "time", "region")
    HOST_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    WAITED_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    host_id: str
    to: str
    phase: HostPoolMovePhase
    reason: str
    waited: _duration_pb2.Duration
    time: _timestamp_pb2.Timestamp
    region: str
    def __init__(self, host_id: _Optional[str] = ..., to: _Optional[str] = ..., phase: _Optional[_Union[HostPoolMovePhase, str]] = ..., reason: _Optional[str] = ..., waited: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., region: _Optional[str] = ..., **kwargs) -> None: ...

class RegionMember(_message.Message):
    __slots__ = ("name", "address", "role", "leader", "status", "probes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PROBES_FIELD_NUMBER: _ClassVar[int]
    name: str
    address: str
    role: str
    leader: bool
    status: str
    probes: ProbeCounts
    def __init__(self, name: _Optional[str] = ..., address: _Optional[str] = ..., role: _Optional[str] = ..., leader: _Optional[bool] = ..., status: _Optional[str] = ..., probes: _Optional[_Union[ProbeCounts, _Mapping]] = ...) -> None: ...

class ProbeCounts(_message.Message):
    __slots__ = ("sent", "lost", "failed", "window")
    SENT_FIELD_NUMBER: _ClassVar[int]
    LOST_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    sent: int
    lost: int
    failed: int
    window: _duration_pb2.Duration
    def __init__(self, sent: _Optional[int] = ..., lost: _Optional[int] = ..., failed: _Optional[int] = ..., window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class Region(_message.Message):
    __slots__ = ("name", "health", "members", "capacity", "allocation", "last_seen", "host_labels")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_FIELD_NUMBER: _ClassVar[int]
    LAST_SEEN_FIELD_NUMBER: _ClassVar[int]
    HOST_LABELS_FIELD_NUMBER: _ClassVar[int]
    name: str
    health: str
    members: _containers.RepeatedCompositeFieldContainer[RegionMember]
    capacity: Resources
    allocation: Resources
    last_seen: _timestamp_pb2.Timestamp
    host_labels: _containers.RepeatedCompositeFieldContainer[HostLabelValues]
    def __init__(self, name: _Optional[str] = ..., health: _Optional[str] = ..., members: _Optional[_Iterable[_Union[RegionMember, _Mapping]]] = ..., capacity: _Optional[_Union[Resources, _Mapping]] = ..., allocation: _Optional[_Union[Resources, _Mapping]] = ..., last_seen: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., host_labels: _Optional[_Iterable[_Union[HostLabelValues, _Mapping]]] = ...) -> None: ...

class HostLabelValues(_message.Message):
    __slots__ = ("key", "values")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    key: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class Replica(_message.Message):
    __slots__ = ("job", "owner_region", "succeeded", "relocated_region", "relocated_job_id", "relocated_time", "update_time", "deleted")
    JOB_FIELD_NUMBER: _ClassVar[int]
    OWNER_REGION_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    RELOCATED_REGION_FIELD_NUMBER: _ClassVar[int]
    RELOCATED_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RELOCATED_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    job: Job
    owner_region: str
    succeeded: _containers.RepeatedScalarFieldContainer[int]
    relocated_region: str
    relocated_job_id: str
    relocated_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    deleted: bool
    def __init__(self, job: _Optional[_Union[Job, _Mapping]] = ..., owner_region: _Optional[str] = ..., succeeded: _Optional[_Iterable[int]] = ..., relocated_region: _Optional[str] = ..., relocated_job_id: _Optional[str] = ..., relocated_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted: _Optional[bool] = ...) -> None: ...

class RegionPlan(_message.Message):
    __slots__ = ("region", "moves", "unplaced", "pinned")
    REGION_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    UNPLACED_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    region: str
    moves: _containers.RepeatedCompositeFieldContainer[PlannedMove]
    unplaced: _containers.RepeatedCompositeFieldContainer[PlannedMove]
    pinned: int
    def __init__(self, region: _Optional[str] = ..., moves: _Optional[_Iterable[_Union[PlannedMove, _Mapping]]] = ..., unplaced: _Optional[_Iterable[_Union[PlannedMove, _Mapping]]] = ..., pinned: _Optional[int] = ...) -> None: ...

class PlannedMove(_message.Message):
    __slots__ = ("job_id", "job_name", "to_region", "reason")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_NAME_FIELD_NUMBER: _ClassVar[int]
    TO_REGION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    job_name: str
    to_region: str
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., job_name: _Optional[str] = ..., to_region: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Drill(_message.Message):
    __slots__ = ("id", "region", "state", "start_time", "end_time", "detection_seconds", "relocation_seconds", "failback_seconds", "moved", "not_moved", "message")
    ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    DETECTION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RELOCATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FAILBACK_SECONDS_FIELD_NUMBER: _ClassVar[int]
    MOVED_FIELD_NUMBER: _ClassVar[int]
    NOT_MOVED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    region: str
    state: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    detection_seconds: float
    relocation_seconds: float
    failback_seconds: float
    moved: _containers.RepeatedCompositeFieldContainer[PlannedMove]
    not_moved: _containers.RepeatedCompositeFieldContainer[PlannedMove]
    message: str
    def __init__(self, id: _Optional[str] = ..., region: _Optional[str] = ..., state: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., detection_seconds: _Optional[float] = ..., relocation_seconds: _Optional[float] = ..., failback_seconds: _Optional[float] = ..., moved: _Optional[_Iterable[_Union[PlannedMove, _Mapping]]] = ..., not_moved: _Optional[_Iterable[_Union[PlannedMove, _Mapping]]] = ..., message: _Optional[str] = ...) -> None: ...

class MigrationJob(_message.Message):
    __slots__ = ("job_id", "type", "from_cluster", "instances", "moved", "in_flight", "max_unavailable", "sla_max_unavailable", "failures", "retries", "surge", "done", "message")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FROM_CLUSTER_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    MOVED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    MAX_UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    SLA_MAX_UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    RETRIES_FIELD_NUMBER: _ClassVar[int]
    SURGE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    type: JobType
    from_cluster: str
    instances: int
    moved: int
    in_flight: int
    max_unavailable: int
    sla_max_unavailable: int
    failures: int
    retries: int
    surge: int
    done: bool
    message: str
    def __init__(self, job_id: _Optional[str] = ..., type: _Optional[_Union[JobType, str]] = ..., from_cluster: _Optional[str] = ..., instances: _Optional[int] = ..., moved: _Optional[int] = ..., in_flight: _Optional[int] = ..., max_unavailable: _Optional[int] = ..., sla_max_unavailable: _Optional[int] = ..., failures: _Optional[int] = ..., retries: _Optional[int] = ..., surge: _Optional[int] = ..., done: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class Migration(_message.Message):
    __slots__ = ("id", "job_id", "pool", "to_cluster", "batch_size", "surge", "move_running", "allow_stateful", "paused", "state", "message", "create_time", "completion_time", "duration", "jobs", "instances_total", "instances_moved", "instances_in_flight", "region")
    ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    TO_CLUSTER_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    SURGE_FIELD_NUMBER: _ClassVar[int]
    MOVE_RUNNING_FIELD_NUMBER: _ClassVar[int]
    ALLOW_STATEFUL_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TIME_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_MOVED_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    id: str
    job_id: str
    pool: str
    to_cluster: str
    batch_size: int
    surge: bool
    move_running: bool
    allow_stateful: bool
    paused: bool
    state: MigrationState
    message: str
    create_time: _timestamp_pb2.Timestamp
    completion_time: _timestamp_pb2.Timestamp
    duration: _duration_pb2.Duration
    jobs: _containers.RepeatedCompositeFieldContainer[MigrationJob]
    instances_total: int
    instances_moved: int
    instances_in_flight: int
    region: str
    def __init__(self, id: _Optional[str] = ..., job_id: _Optional[str] = ..., pool: _Optional[str] = ..., to_cluster: _Optional[str] = ..., batch_size: _Optional[int] = ..., surge: _Optional[bool] = ..., move_running: _Optional[bool] = ..., allow_stateful: _Optional[bool] = ..., paused: _Optional[bool] = ..., state: _Optional[_Union[MigrationState, str]] = ..., message: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completion_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., jobs: _Optional[_Iterable[_Union[MigrationJob, _Mapping]]] = ..., instances_total: _Optional[int] = ..., instances_moved: _Optional[int] = ..., instances_in_flight: _Optional[int] = ..., region: _Optional[str] = ...) -> None: ...

class ClusterSummary(_message.Message):
    __slots__ = ("name", "kind", "region", "drained", "hosts", "capacity", "allocated", "tasks", "jobs", "pools")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    DRAINED_FIELD_NUMBER: _ClassVar[int]
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATED_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: str
    region: str
    drained: bool
    hosts: int
    capacity: Resources
    allocated: Resources
    tasks: int
    jobs: _containers.RepeatedCompositeFieldContainer[ClusterUsage]
    pools: _containers.RepeatedCompositeFieldContainer[ClusterUsage]
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., region: _Optional[str] = ..., drained: _Optional[bool] = ..., hosts: _Optional[int] = ..., capacity: _Optional[_Union[Resources, _Mapping]] = ..., allocated: _Optional[_Union[Resources, _Mapping]] = ..., tasks: _Optional[int] = ..., jobs: _Optional[_Iterable[_Union[ClusterUsage, _Mapping]]] = ..., pools: _Optional[_Iterable[_Union[ClusterUsage, _Mapping]]] = ...) -> None: ...

class ClusterUsage(_message.Message):
    __slots__ = ("name", "tasks", "allocated")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATED_FIELD_NUMBER: _ClassVar[int]
    name: str
    tasks: int
    allocated: Resources
    def __init__(self, name: _Optional[str] = ..., tasks: _Optional[int] = ..., allocated: _Optional[_Union[Resources, _Mapping]] = ...) -> None: ...

class AuditRecord(_message.Message):
    __slots__ = ("time", "name", "method", "forwarded_by", "rpc", "action", "resource", "code", "message", "region")
    TIME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    FORWARDED_BY_FIELD_NUMBER: _ClassVar[int]
    RPC_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    name: str
    method: str
    forwarded_by: str
    rpc: str
    action: str
    resource: str
    code: str
    message: str
    region: str
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., name: _Optional[str] = ..., method: _Optional[str] = ..., forwarded_by: _Optional[str] = ..., rpc: _Optional[str] = ..., action: _Optional[str] = ..., resource: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...
