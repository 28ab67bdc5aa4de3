"""Entry point: `python -m bench.run --players N [--tiny]` (what `make bench` runs).

Django starts only once the environment points at the bench's own database and keys, so the
modules that use the ORM are imported after that.
"""

from __future__ import annotations

import sys

from .environment import bench_environment, database_ensure, django_setup
from .errors import BenchError
from .h2load import h2load_ensure
from .options import options_parse
from .processes import stop_on_sigterm
from .wrk import wrk_ensure


def main(argv: list[str] | None = None) -> int:
    options = options_parse(argv)
    stop_on_sigterm()
    try:
        env = bench_environment(options)
        wrk = wrk_ensure()
        h2load = h2load_ensure()
        if database_ensure(env):
            print(f"[bench] created database {env.database}", flush=True)
        django_setup(env.variables())
    except BenchError as exc:
        print(f"[bench] ERROR: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130
    from .phases import run

    return run(options, env, wrk, h2load)


if __name__ == "__main__":
    sys.exit(main())
