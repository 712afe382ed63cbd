"""Configuration: file < environment < flags, one-line errors naming file, line and key, saving."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from owltui.session.config import ConfigError, load_config, save_config_value


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path), **extra}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cfg" / "owltui" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    cfg = load_config(_env(tmp_path))
    assert cfg.max_rounds == 40 and cfg.permission_mode == "ask" and cfg.steering == "batch"
    assert cfg.provider is None and cfg.keys == {}


def test_precedence_file_then_env_then_flags(tmp_path: Path) -> None:
    _write(
        tmp_path,
        'provider = "openai"\nmodel = "m-file"\nmax_rounds = 10\nsteering = "immediate"\n'
        'theme = "owl-light"\nstream_idle_timeout = 30\n[keys]\npause = "ctrl+p"\n',
    )
    env = _env(tmp_path, OWLTUI_MAX_ROUNDS="20", OWLTUI_MODEL="m-env")
    cfg = load_config(env)
    assert (cfg.provider, cfg.model, cfg.max_rounds, cfg.steering) == ("openai", "m-env", 20, "immediate")
    assert cfg.theme == "owl-light" and cfg.stream_idle_timeout == 30 and cfg.keys == {"pause": "ctrl+p"}
    cfg = load_config(env, {"max_rounds": 5, "model": None})
    assert cfg.max_rounds == 5 and cfg.model == "m-env"  # None flags do not override


def test_invalid_toml_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, 'provider = "demo"\ntheme = "unterminated\n')
    with pytest.raises(ConfigError) as err:
        load_config(_env(tmp_path))
    msg = str(err.value)
    assert str(path) in msg and "line 2" in msg and "theme" in msg and "\n" not in msg


def test_unknown_key_names_file_line_and_key(tmp_path: Path) -> None:
    path = _write(tmp_path, '# comment\nmodel = "x"\ncolour = "blue"\n')
    with pytest.raises(ConfigError, match=r"line 3.*unknown key 'colour'") as err:
        load_config(_env(tmp_path))
    assert str(path) in str(err.value)


def test_bad_value_names_the_key(tmp_path: Path) -> None:
    _write(tmp_path, 'max_rounds = "many"\n')
    with pytest.raises(ConfigError, match=r"line 1.*'max_rounds'"):
        load_config(_env(tmp_path))
    _write(tmp_path, 'permission_mode = "whatever"\n')
    with pytest.raises(ConfigError, match="permission_mode"):
        load_config(_env(tmp_path))


def test_bad_environment_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"environment.*max_rounds"):
        load_config(_env(tmp_path, OWLTUI_MAX_ROUNDS="zero"))


def test_save_config_value_keeps_other_keys(tmp_path: Path) -> None:
    path = _write(tmp_path, 'model = "keep-me"\n')
    saved = save_config_value("theme", "owl-light", env=_env(tmp_path))
    assert saved == path
    assert tomllib.loads(path.read_text()) == {"model": "keep-me", "theme": "owl-light"}
    assert load_config(_env(tmp_path)).theme == "owl-light"
    with pytest.raises(ConfigError):
        save_config_value("nonsense", 1, env=_env(tmp_path))


def test_save_config_value_creates_the_file(tmp_path: Path) -> None:
    path = save_config_value("theme", "owl-dark", env=_env(tmp_path))
    assert path.exists() and load_config(_env(tmp_path)).theme == "owl-dark"
