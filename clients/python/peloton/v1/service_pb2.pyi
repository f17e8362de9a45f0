import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from peloton.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JobOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_ORDER_UNSPECIFIED: _ClassVar[JobOrder]
    JOB_ORDER_OLDEST_FIRST: _ClassVar[JobOrder]
    JOB_ORDER_NEWEST_FIRST: _ClassVar[JobOrder]

class JobView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_VIEW_UNSPECIFIED: _ClassVar[JobView]
    JOB_VIEW_SUMMARY: _ClassVar[JobView]
    JOB_VIEW_FULL: _ClassVar[JobView]
JOB_ORDER_UNSPECIFIED: JobOrder
JOB_ORDER_OLDEST_FIRST: JobOrder
JOB_ORDER_NEWEST_FIRST: JobOrder
JOB_VIEW_UNSPECIFIED: JobView
JOB_VIEW_SUMMARY: JobView
JOB_VIEW_FULL: JobView

class StartMigrationRequest(_message.Message):
    __slots__ = ("job_id", "pool", "to_cluster", "batch_size", "surge", "start_paused", "move_running", "allow_stateful", "region")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    TO_CLUSTER_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    SURGE_FIELD_NUMBER: _ClassVar[int]
    START_PAUSED_FIELD_NUMBER: _ClassVar[int]
    MOVE_RUNNING_FIELD_NUMBER: _ClassVar[int]
    ALLOW_STATEFUL_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    pool: str
    to_cluster: str
    batch_size: int
    surge: bool
    start_paused: bool
    move_running: bool
    allow_stateful: bool
    region: str
    def __init__(self, job_id: _Optional[str] = ..., pool: _Optional[str] = ..., to_cluster: _Optional[str] = ..., batch_size: _Optional[int] = ..., surge: _Optional[bool] = ..., start_paused: _Optional[bool] = ..., move_running: _Optional[bool] = ..., allow_stateful: _Optional[bool] = ..., region: _Optional[str] = ...) -> None: ...

class StartMigrationResponse(_message.Message):
    __slots__ = ("migration",)
    MIGRATION_FIELD_NUMBER: _ClassVar[int]
    migration: _types_pb2.Migration
    def __init__(self, migration: _Optional[_Union[_types_pb2.Migration, _Mapping]] = ...) -> None: ...

class GetMigrationRequest(_message.Message):
    __slots__ = ("migration_id", "region")
    MIGRATION_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    migration_id: str
    region: str
    def __init__(self, migration_id: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class GetMigrationResponse(_message.Message):
    __slots__ = ("migration",)
    MIGRATION_FIELD_NUMBER: _ClassVar[int]
    migration: _types_pb2.Migration
    def __init__(self, migration: _Optional[_Union[_types_pb2.Migration, _Mapping]] = ...) -> None: ...

class ListMigrationsRequest(_message.Message):
    __slots__ = ("region",)
    REGION_FIELD_NUMBER: _ClassVar[int]
    region: str
    def __init__(self, region: _Optional[str] = ...) -> None: ...

class ListMigrationsResponse(_message.Message):
    __slots__ = ("migrations",)
    MIGRATIONS_FIELD_NUMBER: _ClassVar[int]
    migrations: _containers.RepeatedCompositeFieldContainer[_types_pb2.Migration]
    def __init__(self, migrations: _Optional[_Iterable[_Union[_types_pb2.Migration, _Mapping]]] = ...) -> None: ...

class PauseMigrationRequest(_message.Message):
    __slots__ = ("migration_id", "region")
    MIGRATION_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    migration_id: str
    region: str
    def __init__(self, migration_id: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class PauseMigrationResponse(_message.Message):
    __slots__ = ("migration",)
    MIGRATION_FIELD_NUMBER: _ClassVar[int]
    migration: _types_pb2.Migration
    def __init__(self, migration: _Optional[_Union[_types_pb2.Migration, _Mapping]] = ...) -> None: ...

class ResumeMigrationRequest(_message.Message):
    __slots__ = ("migration_id", "region")
    MIGRATION_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    migration_id: str
    region: str
    def __init__(self, migration_id: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class ResumeMigrationResponse(_message.Message):
    __slots__ = ("migration",)
    MIGRATION_FIELD_NUMBER: _ClassVar[int]
    migration: _types_pb2.Migration
    def __init__(self, migration: _Optional[_Union[_types_pb2.Migration, _Mapping]] = ...) -> None: ...

class AbortMigrationRequest(_message.Message):
    __slots__ = ("migration_id", "region")
    MIGRATION_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    migration_id: str
    region: str
    def __init__(self, migration_id: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class AbortMigrationResponse(_message.Message):
    __slots__ = ("migration",)
    MIGRATION_FIELD_NUMBER: _ClassVar[int]
    migration: _types_pb2.Migration
    def __init__(self, migration: _Optional[_Union[_types_pb2.Migration, _Mapping]] = ...) -> None: ...

class RollbackMigrationRequest(_message.Message):
    __slots__ = ("migration_id", "region")
    MIGRATION_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    migration_id: str
    region: str
    def __init__(self, migration_id: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class RollbackMigrationResponse(_message.Message):
    __slots__ = ("migration",)
    MIGRATION_FIELD_NUMBER: _ClassVar[int]
    migration: _types_pb2.Migration
    def __init__(self, migration: _Optional[_Union[_types_pb2.Migration, _Mapping]] = ...) -> None: ...

class CreateJobRequest(_message.Message):
    __slots__ = ("spec", "request_id")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    spec: _types_pb2.JobSpec
    request_id: str
    def __init__(self, spec: _Optional[_Union[_types_pb2.JobSpec, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class CreateJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.Job
    def __init__(self, job: _Optional[_Union[_types_pb2.Job, _Mapping]] = ...) -> None: ...

class CreateJobsRequest(_message.Message):
    __slots__ = ("request_id", "jobs", "positions")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    jobs: _containers.RepeatedCompositeFieldContainer[_types_pb2.JobSpec]
    positions: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, request_id: _Optional[str] = ..., jobs: _Optional[_Iterable[_Union[_types_pb2.JobSpec, _Mapping]]] = ..., positions: _Optional[_Iterable[int]] = ...) -> None: ...

class CreateJobsResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[CreateJobsResult]
    def __init__(self, results: _Optional[_Iterable[_Union[CreateJobsResult, _Mapping]]] = ...) -> None: ...

class CreateJobsResult(_message.Message):
    __slots__ = ("job_id", "code", "message", "region", "existing")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    code: int
    message: str
    region: str
    existing: bool
    def __init__(self, job_id: _Optional[str] = ..., code: _Optional[int] = ..., message: _Optional[str] = ..., region: _Optional[str] = ..., existing: _Optional[bool] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.Job
    def __init__(self, job: _Optional[_Union[_types_pb2.Job, _Mapping]] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("states", "pool", "limit", "page_token", "labels", "owner", "name", "view", "order", "search", "count_total", "run_of")
    STATES_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    SEARCH_FIELD_NUMBER: _ClassVar[int]
    COUNT_TOTAL_FIELD_NUMBER: _ClassVar[int]
    RUN_OF_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedScalarFieldContainer[_types_pb2.JobState]
    pool: str
    limit: int
    page_token: str
    labels: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    name: str
    view: JobView
    order: JobOrder
    search: str
    count_total: bool
    run_of: str
    def __init__(self, states: _Optional[_Iterable[_Union[_types_pb2.JobState, str]]] = ..., pool: _Optional[str] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ..., labels: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., name: _Optional[str] = ..., view: _Optional[_Union[JobView, str]] = ..., order: _Optional[_Union[JobOrder, str]] = ..., search: _Optional[str] = ..., count_total: _Optional[bool] = ..., run_of: _Optional[str] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_page_token", "total", "task_states")
    class TaskStatesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    TASK_STATES_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_types_pb2.Job]
    next_page_token: str
    total: int
    task_states: _containers.ScalarMap[str, int]
    def __init__(self, jobs: _Optional[_Iterable[_Union[_types_pb2.Job, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total: _Optional[int] = ..., task_states: _Optional[_Mapping[str, int]] = ...) -> None: ...

class StopJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class StopJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.Job
    def __init__(self, job: _Optional[_Union[_types_pb2.Job, _Mapping]] = ...) -> None: ...

class SuspendJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class SuspendJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.Job
    def __init__(self, job: _Optional[_Union[_types_pb2.Job, _Mapping]] = ...) -> None: ...

class ResumeJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ResumeJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.Job
    def __init__(self, job: _Optional[_Union[_types_pb2.Job, _Mapping]] = ...) -> None: ...

class RunJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RunJobResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _types_pb2.Job
    def __init__(self, run: _Optional[_Union[_types_pb2.Job, _Mapping]] = ...) -> None: ...

class DeleteJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteJobResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class UpdateJobRequest(_message.Message):
    __slots__ = ("job_id", "spec", "batch_size", "max_failures", "rollback_on_failure", "start_paused", "min_healthy_seconds", "in_place", "canary", "auto_promote_after_seconds", "canary_extra")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_FAILURES_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_ON_FAILURE_FIELD_NUMBER: _ClassVar[int]
    START_PAUSED_FIELD_NUMBER: _ClassVar[int]
    MIN_HEALTHY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    CANARY_FIELD_NUMBER: _ClassVar[int]
    AUTO_PROMOTE_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CANARY_EXTRA_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    spec: _types_pb2.JobSpec
    batch_size: int
    max_failures: int
    rollback_on_failure: bool
    start_paused: bool
    min_healthy_seconds: int
    in_place: bool
    canary: int
    auto_promote_after_seconds: int
    canary_extra: bool
    def __init__(self, job_id: _Optional[str] = ..., spec: _Optional[_Union[_types_pb2.JobSpec, _Mapping]] = ..., batch_size: _Optional[int] = ..., max_failures: _Optional[int] = ..., rollback_on_failure: _Optional[bool] = ..., start_paused: _Optional[bool] = ..., min_healthy_seconds: _Optional[int] = ..., in_place: _Optional[bool] = ..., canary: _Optional[int] = ..., auto_promote_after_seconds: _Optional[int] = ..., canary_extra: _Optional[bool] = ...) -> None: ...

class UpdateJobResponse(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _types_pb2.Update
    def __init__(self, update: _Optional[_Union[_types_pb2.Update, _Mapping]] = ...) -> None: ...

class GetUpdateRequest(_message.Message):
    __slots__ = ("update_id",)
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    update_id: str
    def __init__(self, update_id: _Optional[str] = ...) -> None: ...

class GetUpdateResponse(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _types_pb2.Update
    def __init__(self, update: _Optional[_Union[_types_pb2.Update, _Mapping]] = ...) -> None: ...

class ListUpdatesRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class ListUpdatesResponse(_message.Message):
    __slots__ = ("updates",)
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    updates: _containers.RepeatedCompositeFieldContainer[_types_pb2.Update]
    def __init__(self, updates: _Optional[_Iterable[_Union[_types_pb2.Update, _Mapping]]] = ...) -> None: ...

class AbortUpdateRequest(_message.Message):
    __slots__ = ("update_id",)
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    update_id: str
    def __init__(self, update_id: _Optional[str] = ...) -> None: ...

class AbortUpdateResponse(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _types_pb2.Update
    def __init__(self, update: _Optional[_Union[_types_pb2.Update, _Mapping]] = ...) -> None: ...

class PauseUpdateRequest(_message.Message):
    __slots__ = ("update_id",)
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    update_id: str
    def __init__(self, update_id: _Optional[str] = ...) -> None: ...

class PauseUpdateResponse(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _types_pb2.Update
    def __init__(self, update: _Optional[_Union[_types_pb2.Update, _Mapping]] = ...) -> None: ...

class ResumeUpdateRequest(_message.Message):
    __slots__ = ("update_id",)
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    update_id: str
    def __init__(self, update_id: _Optional[str] = ...) -> None: ...

class ResumeUpdateResponse(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _types_pb2.Update
    def __init__(self, update: _Optional[_Union[_types_pb2.Update, _Mapping]] = ...) -> None: ...

class RollbackUpdateRequest(_message.Message):
    __slots__ = ("update_id",)
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    update_id: str
    def __init__(self, update_id: _Optional[str] = ...) -> None: ...

class RollbackUpdateResponse(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _types_pb2.Update
    def __init__(self, update: _Optional[_Union[_types_pb2.Update, _Mapping]] = ...) -> None: ...

class PromoteUpdateRequest(_message.Message):
    __slots__ = ("update_id",)
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    update_id: str
    def __init__(self, update_id: _Optional[str] = ...) -> None: ...

class PromoteUpdateResponse(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _types_pb2.Update
    def __init__(self, update: _Optional[_Union[_types_pb2.Update, _Mapping]] = ...) -> None: ...

class GetJobConfigRequest(_message.Message):
    __slots__ = ("job_id", "version")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    version: int
    def __init__(self, job_id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class GetJobConfigResponse(_message.Message):
    __slots__ = ("spec", "version", "versions")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    spec: _types_pb2.JobSpec
    version: int
    versions: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, spec: _Optional[_Union[_types_pb2.JobSpec, _Mapping]] = ..., version: _Optional[int] = ..., versions: _Optional[_Iterable[int]] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("job_id", "instance", "after_seq", "limit")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    instance: int
    after_seq: int
    limit: int
    def __init__(self, job_id: _Optional[str] = ..., instance: _Optional[int] = ..., after_seq: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ("events", "more")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    more: bool
    def __init__(self, events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., more: _Optional[bool] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("job_id", "states", "offset", "limit")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    states: _containers.RepeatedScalarFieldContainer[_types_pb2.TaskState]
    offset: int
    limit: int
    def __init__(self, job_id: _Optional[str] = ..., states: _Optional[_Iterable[_Union[_types_pb2.TaskState, str]]] = ..., offset: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks", "total")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_types_pb2.Task]
    total: int
    def __init__(self, tasks: _Optional[_Iterable[_Union[_types_pb2.Task, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("job_id", "instance")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    instance: int
    def __init__(self, job_id: _Optional[str] = ..., instance: _Optional[int] = ...) -> None: ...

class GetTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _types_pb2.Task
    def __init__(self, task: _Optional[_Union[_types_pb2.Task, _Mapping]] = ...) -> None: ...

class GetTaskLogsRequest(_message.Message):
    __slots__ = ("job_id", "instance", "stream", "run", "offset", "limit")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    instance: int
    stream: str
    run: int
    offset: int
    limit: int
    def __init__(self, job_id: _Optional[str] = ..., instance: _Optional[int] = ..., stream: _Optional[str] = ..., run: _Optional[int] = ..., offset: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class GetTaskLogsResponse(_message.Message):
    __slots__ = ("data", "next_offset", "size")
    DATA_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    next_offset: int
    size: int
    def __init__(self, data: _Optional[bytes] = ..., next_offset: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...

class StopTasksRequest(_message.Message):
    __slots__ = ("job_id", "instances", "force")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    instances: _containers.RepeatedScalarFieldContainer[int]
    force: bool
    def __init__(self, job_id: _Optional[str] = ..., instances: _Optional[_Iterable[int]] = ..., force: _Optional[bool] = ...) -> None: ...

class StopTasksResponse(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_types_pb2.Task]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_types_pb2.Task, _Mapping]]] = ...) -> None: ...

class RestartTasksRequest(_message.Message):
    __slots__ = ("job_id", "instances", "force")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    instances: _containers.RepeatedScalarFieldContainer[int]
    force: bool
    def __init__(self, job_id: _Optional[str] = ..., instances: _Optional[_Iterable[int]] = ..., force: _Optional[bool] = ...) -> None: ...

class RestartTasksResponse(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_types_pb2.Task]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_types_pb2.Task, _Mapping]]] = ...) -> None: ...

class CreatePoolRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: _types_pb2.PoolSpec
    def __init__(self, spec: _Optional[_Union[_types_pb2.PoolSpec, _Mapping]] = ...) -> None: ...

class CreatePoolResponse(_message.Message):
    __slots__ = ("pool",)
    POOL_FIELD_NUMBER: _ClassVar[int]
    pool: _types_pb2.Pool
    def __init__(self, pool: _Optional[_Union[_types_pb2.Pool, _Mapping]] = ...) -> None: ...

class UpdatePoolRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: _types_pb2.PoolSpec
    def __init__(self, spec: _Optional[_Union[_types_pb2.PoolSpec, _Mapping]] = ...) -> None: ...

class UpdatePoolResponse(_message.Message):
    __slots__ = ("pool",)
    POOL_FIELD_NUMBER: _ClassVar[int]
    pool: _types_pb2.Pool
    def __init__(self, pool: _Optional[_Union[_types_pb2.Pool, _Mapping]] = ...) -> None: ...

class DeletePoolRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class DeletePoolResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPoolsRequest(_message.Message):
    __slots__ = ("in_use",)
    IN_USE_FIELD_NUMBER: _ClassVar[int]
    in_use: bool
    def __init__(self, in_use: _Optional[bool] = ...) -> None: ...

class ListPoolsResponse(_message.Message):
    __slots__ = ("pools",)
    POOLS_FIELD_NUMBER: _ClassVar[int]
    pools: _containers.RepeatedCompositeFieldContainer[_types_pb2.Pool]
    def __init__(self, pools: _Optional[_Iterable[_Union[_types_pb2.Pool, _Mapping]]] = ...) -> None: ...

class GetPoolRequest(_message.Message):
    __slots__ = ("path", "regions")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    path: str
    regions: bool
    def __init__(self, path: _Optional[str] = ..., regions: _Optional[bool] = ...) -> None: ...

class GetPoolResponse(_message.Message):
    __slots__ = ("pool",)
    POOL_FIELD_NUMBER: _ClassVar[int]
    pool: _types_pb2.Pool
    def __init__(self, pool: _Optional[_Union[_types_pb2.Pool, _Mapping]] = ...) -> None: ...

class GetPoolHistoryRequest(_message.Message):
    __slots__ = ("path", "region", "since")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    path: str
    region: str
    since: _timestamp_pb2.Timestamp
    def __init__(self, path: _Optional[str] = ..., region: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetPoolHistoryResponse(_message.Message):
    __slots__ = ("path", "region", "window", "interval", "times", "step_seconds", "resources", "pending_tasks", "running_tasks")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    TIMES_FIELD_NUMBER: _ClassVar[int]
    STEP_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    PENDING_TASKS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    path: str
    region: str
    window: _duration_pb2.Duration
    interval: _duration_pb2.Duration
    times: _containers.RepeatedScalarFieldContainer[float]
    step_seconds: _containers.RepeatedScalarFieldContainer[int]
    resources: _containers.RepeatedCompositeFieldContainer[PoolResourceHistory]
    pending_tasks: _containers.RepeatedScalarFieldContainer[int]
    running_tasks: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, path: _Optional[str] = ..., region: _Optional[str] = ..., window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., times: _Optional[_Iterable[float]] = ..., step_seconds: _Optional[_Iterable[int]] = ..., resources: _Optional[_Iterable[_Union[PoolResourceHistory, _Mapping]]] = ..., pending_tasks: _Optional[_Iterable[int]] = ..., running_tasks: _Optional[_Iterable[int]] = ...) -> None: ...

class PoolResourceHistory(_message.Message):
    __slots__ = ("name", "reservation", "limit", "demand", "uncapped_demand", "allocation", "entitlement")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESERVATION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    DEMAND_FIELD_NUMBER: _ClassVar[int]
    UNCAPPED_DEMAND_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_FIELD_NUMBER: _ClassVar[int]
    ENTITLEMENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    reservation: _containers.RepeatedScalarFieldContainer[float]
    limit: _containers.RepeatedScalarFieldContainer[float]
    demand: _containers.RepeatedScalarFieldContainer[float]
    uncapped_demand: _containers.RepeatedScalarFieldContainer[float]
    allocation: _containers.RepeatedScalarFieldContainer[float]
    entitlement: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, name: _Optional[str] = ..., reservation: _Optional[_Iterable[float]] = ..., limit: _Optional[_Iterable[float]] = ..., demand: _Optional[_Iterable[float]] = ..., uncapped_demand: _Optional[_Iterable[float]] = ..., allocation: _Optional[_Iterable[float]] = ..., entitlement: _Optional[_Iterable[float]] = ...) -> None: ...

class ListClustersRequest(_message.Message):
    __slots__ = ("region",)
    REGION_FIELD_NUMBER: _ClassVar[int]
    region: str
    def __init__(self, region: _Optional[str] = ...) -> None: ...

class ListClustersResponse(_message.Message):
    __slots__ = ("clusters",)
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    clusters: _containers.RepeatedCompositeFieldContainer[_types_pb2.ClusterSummary]
    def __init__(self, clusters: _Optional[_Iterable[_Union[_types_pb2.ClusterSummary, _Mapping]]] = ...) -> None: ...

class GetClusterRequest(_message.Message):
    __slots__ = ("cluster", "region")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    region: str
    def __init__(self, cluster: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class GetClusterResponse(_message.Message):
    __slots__ = ("cluster",)
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    cluster: _types_pb2.ClusterSummary
    def __init__(self, cluster: _Optional[_Union[_types_pb2.ClusterSummary, _Mapping]] = ...) -> None: ...

class DrainClusterRequest(_message.Message):
    __slots__ = ("cluster", "region")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    region: str
    def __init__(self, cluster: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class DrainClusterResponse(_message.Message):
    __slots__ = ("cluster",)
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    cluster: _types_pb2.ClusterSummary
    def __init__(self, cluster: _Optional[_Union[_types_pb2.ClusterSummary, _Mapping]] = ...) -> None: ...

class UndrainClusterRequest(_message.Message):
    __slots__ = ("cluster", "region")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    region: str
    def __init__(self, cluster: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class UndrainClusterResponse(_message.Message):
    __slots__ = ("cluster",)
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    cluster: _types_pb2.ClusterSummary
    def __init__(self, cluster: _Optional[_Union[_types_pb2.ClusterSummary, _Mapping]] = ...) -> None: ...

class ListHostsRequest(_message.Message):
    __slots__ = ("cluster", "host_id")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    HOST_ID_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    host_id: str
    def __init__(self, cluster: _Optional[str] = ..., host_id: _Optional[str] = ...) -> None: ...

class ListHostsResponse(_message.Message):
    __slots__ = ("hosts",)
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    hosts: _containers.RepeatedCompositeFieldContainer[_types_pb2.Host]
    def __init__(self, hosts: _Optional[_Iterable[_Union[_types_pb2.Host, _Mapping]]] = ...) -> None: ...

class DrainHostRequest(_message.Message):
    __slots__ = ("host_id", "reason", "region", "deadline")
    HOST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    host_id: str
    reason: str
    region: str
    deadline: _duration_pb2.Duration
    def __init__(self, host_id: _Optional[str] = ..., reason: _Optional[str] = ..., region: _Optional[str] = ..., deadline: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class DrainHostResponse(_message.Message):
    __slots__ = ("host",)
    HOST_FIELD_NUMBER: _ClassVar[int]
    host: _types_pb2.Host
    def __init__(self, host: _Optional[_Union[_types_pb2.Host, _Mapping]] = ...) -> None: ...

class UndrainHostRequest(_message.Message):
    __slots__ = ("host_id", "region")
    HOST_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    host_id: str
    region: str
    def __init__(self, host_id: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class UndrainHostResponse(_message.Message):
    __slots__ = ("host",)
    HOST_FIELD_NUMBER: _ClassVar[int]
    host: _types_pb2.Host
    def __init__(self, host: _Optional[_Union[_types_pb2.Host, _Mapping]] = ...) -> None: ...

class MarkHostDownRequest(_message.Message):
    __slots__ = ("host_id", "region", "force")
    HOST_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    host_id: str
    region: str
    force: bool
    def __init__(self, host_id: _Optional[str] = ..., region: _Optional[str] = ..., force: _Optional[bool] = ...) -> None: ...

class MarkHostDownResponse(_message.Message):
    __slots__ = ("host",)
    HOST_FIELD_NUMBER: _ClassVar[int]
    host: _types_pb2.Host
    def __init__(self, host: _Optional[_Union[_types_pb2.Host, _Mapping]] = ...) -> None: ...

class SetHostPoolRequest(_message.Message):
    __slots__ = ("host_id", "host_pool", "region")
    HOST_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_POOL_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    host_id: str
    host_pool: str
    region: str
    def __init__(self, host_id: _Optional[str] = ..., host_pool: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class SetHostPoolResponse(_message.Message):
    __slots__ = ("host",)
    HOST_FIELD_NUMBER: _ClassVar[int]
    host: _types_pb2.Host
    def __init__(self, host: _Optional[_Union[_types_pb2.Host, _Mapping]] = ...) -> None: ...

class ListHostPoolsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListHostPoolsResponse(_message.Message):
    __slots__ = ("host_pools", "recent_moves")
    HOST_POOLS_FIELD_NUMBER: _ClassVar[int]
    RECENT_MOVES_FIELD_NUMBER: _ClassVar[int]
    host_pools: _containers.RepeatedCompositeFieldContainer[_types_pb2.HostPool]
    recent_moves: _containers.RepeatedCompositeFieldContainer[_types_pb2.HostPoolMove]
    def __init__(self, host_pools: _Optional[_Iterable[_Union[_types_pb2.HostPool, _Mapping]]] = ..., recent_moves: _Optional[_Iterable[_Union[_types_pb2.HostPoolMove, _Mapping]]] = ...) -> None: ...

class ListRegionsRequest(_message.Message):
    __slots__ = ("host_labels",)
    HOST_LABELS_FIELD_NUMBER: _ClassVar[int]
    host_labels: bool
    def __init__(self, host_labels: _Optional[bool] = ...) -> None: ...

class ListRegionsResponse(_message.Message):
    __slots__ = ("regions",)
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    regions: _containers.RepeatedCompositeFieldContainer[_types_pb2.Region]
    def __init__(self, regions: _Optional[_Iterable[_Union[_types_pb2.Region, _Mapping]]] = ...) -> None: ...

class GetRegionHistoryRequest(_message.Message):
    __slots__ = ("since",)
    SINCE_FIELD_NUMBER: _ClassVar[int]
    since: _timestamp_pb2.Timestamp
    def __init__(self, since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetRegionHistoryResponse(_message.Message):
    __slots__ = ("window", "interval", "regions")
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    window: _duration_pb2.Duration
    interval: _duration_pb2.Duration
    regions: _containers.RepeatedCompositeFieldContainer[RegionHistory]
    def __init__(self, window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., regions: _Optional[_Iterable[_Union[RegionHistory, _Mapping]]] = ...) -> None: ...

class RegionHistory(_message.Message):
    __slots__ = ("name", "times", "step_seconds", "alive", "suspect", "failed", "reachable_members")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TIMES_FIELD_NUMBER: _ClassVar[int]
    STEP_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ALIVE_FIELD_NUMBER: _ClassVar[int]
    SUSPECT_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    REACHABLE_MEMBERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    times: _containers.RepeatedScalarFieldContainer[float]
    step_seconds: _containers.RepeatedScalarFieldContainer[int]
    alive: _containers.RepeatedScalarFieldContainer[float]
    suspect: _containers.RepeatedScalarFieldContainer[float]
    failed: _containers.RepeatedScalarFieldContainer[float]
    reachable_members: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, name: _Optional[str] = ..., times: _Optional[_Iterable[float]] = ..., step_seconds: _Optional[_Iterable[int]] = ..., alive: _Optional[_Iterable[float]] = ..., suspect: _Optional[_Iterable[float]] = ..., failed: _Optional[_Iterable[float]] = ..., reachable_members: _Optional[_Iterable[float]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("job_id", "after_seq")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    after_seq: int
    def __init__(self, job_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class FailBackRequest(_message.Message):
    __slots__ = ("region",)
    REGION_FIELD_NUMBER: _ClassVar[int]
    region: str
    def __init__(self, region: _Optional[str] = ...) -> None: ...

class FailBackResponse(_message.Message):
    __slots__ = ("moved", "not_moved")
    MOVED_FIELD_NUMBER: _ClassVar[int]
    NOT_MOVED_FIELD_NUMBER: _ClassVar[int]
    moved: _containers.RepeatedCompositeFieldContainer[_types_pb2.PlannedMove]
    not_moved: _containers.RepeatedCompositeFieldContainer[_types_pb2.PlannedMove]
    def __init__(self, moved: _Optional[_Iterable[_Union[_types_pb2.PlannedMove, _Mapping]]] = ..., not_moved: _Optional[_Iterable[_Union[_types_pb2.PlannedMove, _Mapping]]] = ...) -> None: ...

class IsolateRegionRequest(_message.Message):
    __slots__ = ("region", "isolated")
    REGION_FIELD_NUMBER: _ClassVar[int]
    ISOLATED_FIELD_NUMBER: _ClassVar[int]
    region: str
    isolated: bool
    def __init__(self, region: _Optional[str] = ..., isolated: _Optional[bool] = ...) -> None: ...

class IsolateRegionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutReplicaRequest(_message.Message):
    __slots__ = ("replica",)
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    replica: _types_pb2.Replica
    def __init__(self, replica: _Optional[_Union[_types_pb2.Replica, _Mapping]] = ...) -> None: ...

class PutReplicaResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListReplicasRequest(_message.Message):
    __slots__ = ("owner_region", "job_id", "relocated_only")
    OWNER_REGION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RELOCATED_ONLY_FIELD_NUMBER: _ClassVar[int]
    owner_region: str
    job_id: str
    relocated_only: bool
    def __init__(self, owner_region: _Optional[str] = ..., job_id: _Optional[str] = ..., relocated_only: _Optional[bool] = ...) -> None: ...

class ListReplicasResponse(_message.Message):
    __slots__ = ("replicas", "owner_health", "relocating")
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    OWNER_HEALTH_FIELD_NUMBER: _ClassVar[int]
    RELOCATING_FIELD_NUMBER: _ClassVar[int]
    replicas: _containers.RepeatedCompositeFieldContainer[_types_pb2.Replica]
    owner_health: str
    relocating: bool
    def __init__(self, replicas: _Optional[_Iterable[_Union[_types_pb2.Replica, _Mapping]]] = ..., owner_health: _Optional[str] = ..., relocating: _Optional[bool] = ...) -> None: ...

class PlanFailoverRequest(_message.Message):
    __slots__ = ("region",)
    REGION_FIELD_NUMBER: _ClassVar[int]
    region: str
    def __init__(self, region: _Optional[str] = ...) -> None: ...

class PlanFailoverResponse(_message.Message):
    __slots__ = ("plans",)
    PLANS_FIELD_NUMBER: _ClassVar[int]
    plans: _containers.RepeatedCompositeFieldContainer[_types_pb2.RegionPlan]
    def __init__(self, plans: _Optional[_Iterable[_Union[_types_pb2.RegionPlan, _Mapping]]] = ...) -> None: ...

class StartDrillRequest(_message.Message):
    __slots__ = ("region", "duration_seconds")
    REGION_FIELD_NUMBER: _ClassVar[int]
    DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    region: str
    duration_seconds: float
    def __init__(self, region: _Optional[str] = ..., duration_seconds: _Optional[float] = ...) -> None: ...

class StartDrillResponse(_message.Message):
    __slots__ = ("drill",)
    DRILL_FIELD_NUMBER: _ClassVar[int]
    drill: _types_pb2.Drill
    def __init__(self, drill: _Optional[_Union[_types_pb2.Drill, _Mapping]] = ...) -> None: ...

class GetDrillRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetDrillResponse(_message.Message):
    __slots__ = ("drill",)
    DRILL_FIELD_NUMBER: _ClassVar[int]
    drill: _types_pb2.Drill
    def __init__(self, drill: _Optional[_Union[_types_pb2.Drill, _Mapping]] = ...) -> None: ...

class ListDrillsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListDrillsResponse(_message.Message):
    __slots__ = ("drills",)
    DRILLS_FIELD_NUMBER: _ClassVar[int]
    drills: _containers.RepeatedCompositeFieldContainer[_types_pb2.Drill]
    def __init__(self, drills: _Optional[_Iterable[_Union[_types_pb2.Drill, _Mapping]]] = ...) -> None: ...

class GetVersionRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetVersionResponse(_message.Message):
    __slots__ = ("version", "commit", "region")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    version: str
    commit: str
    region: str
    def __init__(self, version: _Optional[str] = ..., commit: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...

class BackupStoreRequest(_message.Message):
    __slots__ = ("region",)
    REGION_FIELD_NUMBER: _ClassVar[int]
    region: str
    def __init__(self, region: _Optional[str] = ...) -> None: ...

class BackupStoreResponse(_message.Message):
    __slots__ = ("chunk", "summary")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    chunk: bytes
    summary: BackupStoreSummary
    def __init__(self, chunk: _Optional[bytes] = ..., summary: _Optional[_Union[BackupStoreSummary, _Mapping]] = ...) -> None: ...

class BackupStoreSummary(_message.Message):
    __slots__ = ("region", "size_bytes", "sha256", "taken_at")
    REGION_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    TAKEN_AT_FIELD_NUMBER: _ClassVar[int]
    region: str
    size_bytes: int
    sha256: str
    taken_at: _timestamp_pb2.Timestamp
    def __init__(self, region: _Optional[str] = ..., size_bytes: _Optional[int] = ..., sha256: _Optional[str] = ..., taken_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WhoAmIRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WhoAmIResponse(_message.Message):
    __slots__ = ("name", "method", "roles", "forwarded_by", "authentication")
    NAME_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    FORWARDED_BY_FIELD_NUMBER: _ClassVar[int]
    AUTHENTICATION_FIELD_NUMBER: _ClassVar[int]
    name: str
    method: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    forwarded_by: str
    authentication: bool
    def __init__(self, name: _Optional[str] = ..., method: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ..., forwarded_by: _Optional[str] = ..., authentication: _Optional[bool] = ...) -> None: ...

class CanIRequest(_message.Message):
    __slots__ = ("action", "pool", "job_id")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    action: str
    pool: str
    job_id: str
    def __init__(self, action: _Optional[str] = ..., pool: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class CanIResponse(_message.Message):
    __slots__ = ("allowed", "reason")
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    allowed: bool
    reason: str
    def __init__(self, allowed: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class GetPolicyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetPolicyResponse(_message.Message):
    __slots__ = ("policy",)
    POLICY_FIELD_NUMBER: _ClassVar[int]
    policy: PolicyDocument
    def __init__(self, policy: _Optional[_Union[PolicyDocument, _Mapping]] = ...) -> None: ...

class SetPolicyRequest(_message.Message):
    __slots__ = ("policy",)
    POLICY_FIELD_NUMBER: _ClassVar[int]
    policy: str
    def __init__(self, policy: _Optional[str] = ...) -> None: ...

class SetPolicyResponse(_message.Message):
    __slots__ = ("policy",)
    POLICY_FIELD_NUMBER: _ClassVar[int]
    policy: PolicyDocument
    def __init__(self, policy: _Optional[_Union[PolicyDocument, _Mapping]] = ...) -> None: ...

class PolicyDocument(_message.Message):
    __slots__ = ("yaml", "source", "set_by", "set_at", "editable")
    YAML_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SET_BY_FIELD_NUMBER: _ClassVar[int]
    SET_AT_FIELD_NUMBER: _ClassVar[int]
    EDITABLE_FIELD_NUMBER: _ClassVar[int]
    yaml: str
    source: str
    set_by: str
    set_at: _timestamp_pb2.Timestamp
    editable: bool
    def __init__(self, yaml: _Optional[str] = ..., source: _Optional[str] = ..., set_by: _Optional[str] = ..., set_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., editable: _Optional[bool] = ...) -> None: ...

class ListAuditRequest(_message.Message):
    __slots__ = ("name", "since", "limit")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    name: str
    since: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, name: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListAuditResponse(_message.Message):
    __slots__ = ("records",)
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[_types_pb2.AuditRecord]
    def __init__(self, records: _Optional[_Iterable[_Union[_types_pb2.AuditRecord, _Mapping]]] = ...) -> None: ...
