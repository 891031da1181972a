"""``--provider`` words and the app's environment settings, read by one parser (no guest started)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.errors import GuestError
from osw_studio.envs.choice import EnvChoice, choice_from_settings, parse_provider

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "test_small.json"


def test_local_remote_and_docker_read_as_a_person_writes_them() -> None:
    assert parse_provider(["local"]) == EnvChoice("local")
    remote = parse_provider(["remote", "http://10.0.0.5:5000/", "https://vm-2.lab:5001"])
    assert remote.urls == ("http://10.0.0.5:5000", "https://vm-2.lab:5001")
    assert parse_provider(["docker"]).options == {"mode": "studio"}
    studio = parse_provider(
        ["docker", "studio", "image=osw-studio-guest:dev", "screen=1280x800", "port=5100"]
    )
    assert studio.options == {
        "mode": "studio",
        "image": "osw-studio-guest:dev",
        "screen": (1280, 800),
        "port": 5100,
    }
    words = "docker osworld qcow2=~/vm/Ubuntu.qcow2 ports=server:5100,vnc:8100 kvm=auto ram=8G cpus=2"
    vm = parse_provider(words.split())
    assert vm.options == {
        "mode": "osworld",
        "qcow2": "~/vm/Ubuntu.qcow2",
        "ports": {"server": 5100, "vnc": 8100},
        "kvm": None,
        "vm_environment": {"RAM_SIZE": "8G", "CPU_CORES": "2"},
    }
    assert vm.label == "docker:osworld" and studio.label == "docker:studio" and remote.label == "remote"
    # mode= works as well as the bare word
    assert parse_provider(["docker", "mode=osworld", "qcow2=/d.qcow2"]).options["mode"] == "osworld"


@pytest.mark.parametrize(
    "words",
    [
        "local",
        "local network=outbound",
        "remote http://a:5000 http://b:5000",
        "docker studio",
        "docker studio image=my/guest:1 screen=1024x768 ready_timeout=90.5 docker_host=ssh://me@box",
        "docker osworld qcow2='/vm/my disk.qcow2' ports=server:5100 kvm=no ram=8G disk=64G",
    ],
)
def test_a_choice_written_back_reads_as_the_same_choice(words: str) -> None:
    choice = parse_provider(shlex.split(words))
    assert parse_provider(shlex.split(str(choice))) == choice


@pytest.mark.parametrize(
    ("words", "says"),
    [
        ([], "no provider given"),
        (["local", "http://a:5000"], "'http://a:5000' is not KEY=VALUE"),
        (
            ["local", "port=5000"],
            "local takes only network=none|outbound and desktop=studio|osworld, not port=",
        ),
        (["local", "desktop=ubuntu"], "desktop=ubuntu: use desktop=studio or desktop=osworld"),
        (["local", "network=web"], "network=web: use network=none (the default) or network=outbound"),
        (["remote"], "remote needs the URL of a running guest server"),
        (["remote", "10.0.0.5:5000"], "'10.0.0.5:5000' is not a guest server URL"),
        (["vmware"], "unknown provider 'vmware'"),
        (["docker", "ubuntu"], "'ubuntu' is not KEY=VALUE"),
        (["docker", "colour=red"], "unknown docker option colour="),
        (["docker", "osworld"], "docker osworld needs the VM disk: qcow2=PATH"),
        (["docker", "qcow2=/vm/U.qcow2"], "qcow2= is an option of docker osworld, not of docker studio"),
        (["docker", "osworld", "qcow2=/q", "screen=800x600"], "screen= is an option of docker studio"),
        (["docker", "screen=big"], "screen=big is not a screen size"),
        (["docker", "port=99999"], "port=99999 is not a whole number from 0 to 65535"),
        (["docker", "osworld", "qcow2=/q", "ports=ssh:22"], "'ssh:22' is not ROLE:PORT"),
        (["docker", "osworld", "qcow2=/q", "kvm=maybe"], "kvm=maybe is not yes, no or auto"),
        (["docker", "ready_timeout=-1"], "ready_timeout=-1 is not a number of seconds above 0"),
        (["docker", "image="], "image= has no value"),
        (["docker", "mode=vm"], "mode=vm is not one of studio, osworld"),
    ],
)
def test_a_wrong_word_is_named_with_what_to_write(words: list[str], says: str) -> None:
    with pytest.raises(GuestError) as caught:
        parse_provider(words)
    assert says in str(caught.value)


def test_one_option_set_per_env_with_the_screen_and_each_urls_token() -> None:
    tokens = {"http://a:5000": "tok-a"}
    remote = parse_provider(["remote", "http://a:5000", "http://b:5000"])
    assert remote.env_options(token=tokens.get) == [
        {"url": "http://a:5000", "token": "tok-a"},
        {"url": "http://b:5000", "token": None},
    ]
    assert parse_provider(["local"]).env_options(2, screen=(1280, 800)) == [{"screen": (1280, 800)}] * 2
    three = parse_provider(["docker"]).env_options(3, screen=(1280, 800))
    assert three == [{"mode": "studio", "screen": (1280, 800)}] * 3
    assert three[0] is not three[1]  # each env gets its own dict (the CLI adds setup options to each)
    own = parse_provider(["docker", "screen=1024x768"]).env_options(1, screen=(1280, 800))
    assert own == [{"mode": "studio", "screen": (1024, 768)}]
    vm = parse_provider(["docker", "osworld", "qcow2=/q"]).env_options(2, screen=(1280, 800))
    assert vm == [{"mode": "osworld", "qcow2": "/q"}] * 2  # the VM keeps its own screen


@pytest.mark.parametrize(
    ("words", "envs", "says"),
    [
        (["local"], 0, "--envs 0: give 1 or more envs"),
        (["remote", "http://a:5000", "http://b:5000"], 3, "--envs 3 but 2 guest URLs"),
        (["docker", "port=5100"], 2, "2 docker envs cannot share the fixed port=5100"),
        (["docker", "osworld", "qcow2=/q", "ports=vnc:8100"], 2, "cannot share the fixed ports=vnc:8100"),
    ],
)
def test_counts_that_cannot_work_are_refused(words: list[str], envs: int, says: str) -> None:
    with pytest.raises(GuestError) as caught:
        parse_provider(words).env_options(envs)
    assert says in str(caught.value)


def test_the_apps_settings_go_through_the_same_parser() -> None:
    assert choice_from_settings("local") == EnvChoice("local")
    assert choice_from_settings("remote", "http://h:5000/").urls == ("http://h:5000",)
    assert choice_from_settings("docker") == parse_provider(["docker"])
    quoted = choice_from_settings("docker", docker_options="osworld qcow2='/vm/my disk.qcow2'")
    assert quoted.options == {"mode": "osworld", "qcow2": "/vm/my disk.qcow2"}
    with pytest.raises(GuestError, match=r"needs a guest server URL.*Settings > Environment"):
        choice_from_settings("remote", None)
    with pytest.raises(GuestError, match="is not a guest server URL"):
        choice_from_settings("remote", "http://a:5000 http://b:5000")
    with pytest.raises(GuestError, match="Docker options: cannot read the docker options"):
        choice_from_settings("docker", docker_options="qcow2='unclosed")
    with pytest.raises(GuestError, match="unknown docker option colour="):
        choice_from_settings("docker", docker_options="colour=red")


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["run", "tasks/os/write-hello-file.json"], "docker osworld needs the VM disk: qcow2=PATH"),
        (["eval", "run", str(SUITE), "--agent", "replay"], "docker osworld needs the VM disk: qcow2=PATH"),
    ],
)
def test_both_commands_refuse_a_bad_docker_choice_before_starting_anything(
    command: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    config = tmp_path / "settings.json"
    config.write_text("{}", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["--config", str(config), *command, "--provider", "docker", "osworld", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert says in err and "Traceback" not in err
    assert not out.exists()  # nothing was started or stored


def test_run_takes_one_guest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = Path(__file__).resolve().parents[2] / "tasks" / "os" / "write-hello-file.json"
    (tmp_path / "s.json").write_text("{}", encoding="utf-8")
    argv = ["--config", str(tmp_path / "s.json"), "run", str(task), "--agent", "replay"]
    code = main([*argv, "--provider", "remote", "http://127.0.0.1:9", "http://127.0.0.1:10"])
    assert code == 2
    assert "`osw-studio run` uses one guest, not 2" in capsys.readouterr().err
