"""Loads one of scripts/ (files without a .py suffix) as a module, for the tests here."""
import importlib.machinery
import importlib.util


def load_script(path, name):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
