"""Applications the benchmark serves beside the service's own, as references: a bare ASGI app
(the machine's ceiling for any Python server) and Django's own handlers answering its health
check, so each serving stack is measured on the same trivial answer."""
