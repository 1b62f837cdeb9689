"""Which engines exist and how to create one. Engines are imported lazily so that a user
of one engine never pays for (or needs the dependencies of) another."""

from __future__ import annotations

import importlib

from model_cache.engine import Engine, EngineError, EngineOptions

# engine name -> "module:factory"; factory(options: EngineOptions) -> Engine
ENGINE_FACTORIES: dict[str, str] = {
    "ppocr": "model_cache.ppocr.engine:create_engine",
    "hunyuan": "model_cache.hunyuan.engine:create_engine",
}
# The text-layer engine reads PDFs, not images: the runner handles it (see model_cache/textlayer.py).
TEXT_LAYER_ENGINE = "textlayer"
ENGINE_NAMES = (*ENGINE_FACTORIES, TEXT_LAYER_ENGINE)



def is_plugin_name(name: str) -> bool:
    """A third-party engine named by import path, e.g. 'mypackage.engine:create_engine'."""
    module, sep, factory = name.partition(":")
    return bool(sep and module and factory.isidentifier())


_loaded: dict[tuple[str, EngineOptions], Engine] = {}


def create_engine(name: str, options: EngineOptions) -> Engine:
    """Create (once per process and options) the engine called `name`."""
    key = (name, options)
    if key in _loaded:
        return _loaded[key]
    target = ENGINE_FACTORIES.get(name) or (name if is_plugin_name(name) else None)
    if target is None:
        raise EngineError(f"unknown engine '{name}' (choose from {', '.join(ENGINE_NAMES)}, "
                          "or give a plugin as module:factory)")
    module_name, factory_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EngineError(f"engine '{name}' is not available: {exc}") from exc
    engine = getattr(module, factory_name)(options)
    _loaded[key] = engine
    return engine
