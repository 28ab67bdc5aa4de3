"""Claims that let one of many callers act once: a season's heal, an operator's job (queued once,
run once)."""

from __future__ import annotations

from config.building_blocks.redis import ScriptCall, client, script_run

from .keys import season_key
from .scripts import JOB_DONE


def heal_claim(season_id: int, *, seconds: int) -> bool:
    """Claim the healing of a season for `seconds` (one rebuild queued, however many callers
    find it lost meanwhile)."""
    return bool(client().set(season_key(season_id, "healing"), "1", nx=True, ex=seconds))


def heal_release(season_id: int) -> None:
    """The season is healed: a loss of it from now on is healed at once again."""
    client().delete(season_key(season_id, "healing"))


# --- Operators' jobs ----------------------------------------------------------------------------
# An operator's rebuild or close is one job, named by an id its message carries: one job of a
# kind waits per season (a double click queues one), and a job runs once (a message the broker
# delivers again, held past its visibility timeout, does nothing).


def season_job_queue_claim(season_id: int, kind: str, job_id: str, *, seconds: int) -> bool:
    """Claim the season's one queued job of `kind` for `job_id` until it is done or `seconds`
    have passed; False if another is queued or running."""
    key = season_key(season_id, f"job:{kind}")
    return bool(client().set(key, job_id, nx=True, ex=seconds))


def season_job_run_claim(season_id: int, job_id: str, *, seconds: int) -> bool:
    """Claim the one run of a job; False if a delivery of it ran already (within `seconds`)."""
    key = season_key(season_id, f"job-run:{job_id}")
    return bool(client().set(key, "1", nx=True, ex=seconds))


def season_job_done(season_id: int, kind: str, job_id: str) -> None:
    """The job ended (done or failed): a new request of its kind is a new job."""
    script_run(ScriptCall(JOB_DONE, [season_key(season_id, f"job:{kind}")], [job_id]))
