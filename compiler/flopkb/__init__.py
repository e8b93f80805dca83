"""flopkb: compile, validate and publish a knowledge base of LLM-inference performance records."""

from flopkb.load import cores as _cores  # noqa: F401 -- samples idle time as early as possible (see flopkb.load.cores)

__version__ = "0.1.0"
