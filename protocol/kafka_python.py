"""kafka-python's codec modules, importable without running its client package's `__init__`.

`kafka/__init__.py` imports the whole client (KafkaConsumer, KafkaProducer, KafkaAdminClient and their
network stack: ~100 ms), and Python runs a package's `__init__` before any of its submodules. The
broker only needs the codec submodules (`kafka.protocol.*`, `kafka.record.*`). Importing this module
registers the real `kafka` package (its own spec, path and loader) with its `__init__` deferred until
someone asks the package itself for a name (`kafka.KafkaConsumer`, `from kafka import KafkaProducer`,
`kafka.__version__`): then it runs, once, exactly as a plain `import kafka` would have.
Submodule imports (`import kafka.protocol.api_message`) never ask the package for a name.

Nothing changes if `kafka` was already imported, and nothing is done if kafka-python is missing.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any

PACKAGE = "kafka"


def defer_package_init(name: str = PACKAGE) -> None:
    """Register package `name` with its `__init__` run on the first lookup of one of its names."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    loader = spec.loader
    module: ModuleType = importlib.util.module_from_spec(spec)  # __spec__, __path__, __file__, __loader__

    def __getattr__(attr: str) -> Any:  # PEP 562: only called for names the module does not have yet
        del module.__dict__["__getattr__"]
        loader.exec_module(module)
        return getattr(module, attr)

    module.__dict__["__getattr__"] = __getattr__
    sys.modules[name] = module


defer_package_init()
