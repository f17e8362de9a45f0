"""Python client of Peloton: generated stubs (peloton.v1) and a thin layer."""

from .client import DEFAULT_ADDR, TERMINAL_JOB_STATES, TERMINAL_TASK_STATES, Client, PelotonError
from .spec import job_spec, load_job_spec, load_pool_spec, pool_spec, spec_to_dict

__all__ = [
    "Client",
    "PelotonError",
    "DEFAULT_ADDR",
    "TERMINAL_JOB_STATES",
    "TERMINAL_TASK_STATES",
    "job_spec",
    "pool_spec",
    "load_job_spec",
    "load_pool_spec",
    "spec_to_dict",
]
