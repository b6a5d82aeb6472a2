"""The config tests' `home` and `project` folders (`_config_files`), for every test here."""

from tests.agents._config_files import home, project

__all__ = ["home", "project"]
