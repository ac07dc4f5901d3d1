"""The platform's own voice, always as a separate process with a time cap (killed when it passes it).

The engine is looked for on PATH at each use (installing espeak-ng needs no restart). Missing: 503
with what to install. Too slow: 504, the process group killed. A voice the engine does not know:
422. Any other failure: 502 with what the engine said.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Any

from backend.features.voice import tts_audio, tts_commands
from backend.features.voice.tts_audio import Speech, SpeechFailed
from backend.features.voice.tts_commands import Command

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0  # espeak-ng speaks 4 096 characters in about a second; `say` and SAPI in a few
VOICES_TIMEOUT_S = 15.0
OUTPUT_CAP = 64 * 1024 * 1024  # 4 096 characters at half speed are about 25 MB of 22 kHz WAV
ENGINES = {"linux": "espeak-ng", "darwin": "say", "win32": "powershell"}
INSTALL = {
    "linux": "Install espeak-ng (Debian and Ubuntu: sudo apt install espeak-ng; Fedora: sudo dnf install "
             "espeak-ng; Arch: sudo pacman -S espeak-ng)",
    "darwin": "macOS's `say` command was not found",
    "win32": "Windows PowerShell was not found",
}


def timeout_s() -> float:
    """The time cap of one run (NUMI_TTS_TIMEOUT_S; read at each use: tests shorten it)."""
    try:
        return max(0.1, float(os.environ.get("NUMI_TTS_TIMEOUT_S", DEFAULT_TIMEOUT_S)))
    except ValueError:
        return DEFAULT_TIMEOUT_S


def platform() -> str:
    return sys.platform if sys.platform in ("darwin", "win32") else "linux"


def engine_path() -> str:
    """The engine's program on PATH; SpeechFailed (503) saying what to install when there is none."""
    where = platform()
    found = shutil.which(ENGINES[where])
    if found is None:
        raise SpeechFailed(503, "no_engine", f"Numi found no offline voice to read aloud with: {INSTALL[where]}, "
                                             f"or pick a provider for reading aloud in Settings → Voice.")
    return found


def speak(text: str, voice: str | None, speed: float) -> Speech:
    """`text` spoken by the platform's voice, as WAV."""
    program = engine_path()
    where = platform()
    if where == "linux":
        out = _run(_located(tts_commands.espeak(text, voice, speed), program), voice)
        return Speech(tts_audio.tidy_wav(out), tts_audio.WAV)
    with tempfile.TemporaryDirectory(prefix="numi-tts-") as folder:
        text_file = os.path.join(folder, "text.txt")
        with open(text_file, "w", encoding="utf-8") as f:
            f.write(tts_commands.plain(text))
        if where == "darwin":
            command = tts_commands.say(text_file, os.path.join(folder, "speech.aiff"), voice, speed)
            _run(_located(command, program), voice)
            return Speech(tts_audio.aiff_to_wav(command.output or ""), tts_audio.WAV)
        command = tts_commands.windows(text_file, os.path.join(folder, "speech.wav"), voice, speed)
        _run(_located(command, program), voice)
        with open(command.output or "", "rb") as f:
            return Speech(tts_audio.tidy_wav(f.read()), tts_audio.WAV)


def voices() -> list[dict]:
    """The platform engine's voices as [{"id", "label"}]; [] when there is no engine or it fails."""
    where = platform()
    argv = tts_commands.voices_command(where)
    program = shutil.which(argv[0])
    if program is None:
        return []
    try:
        done = subprocess.run([program, *argv[1:]], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=VOICES_TIMEOUT_S, **_hidden())
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("voice: listing the offline voices failed: %s", exc)
        return []
    listing = done.stdout.decode("utf-8", "replace")
    parse = {"linux": tts_commands.espeak_voices, "darwin": tts_commands.say_voices,
             "win32": tts_commands.windows_voices}[where]
    return parse(listing) if done.returncode == 0 else []


def _located(command: Command, program: str) -> Command:
    """The command run by the program found on PATH (its full path, so PATH is read once)."""
    return Command([program, *command.argv[1:]], command.stdin, command.env, command.output)


def _run(command: Command, voice: str | None) -> bytes:
    """The engine's stdout, once it exited 0 within the cap; SpeechFailed otherwise."""
    cap = timeout_s()
    try:
        proc = subprocess.Popen(command.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, **command.env}, **_hidden())
    except OSError as exc:
        raise SpeechFailed(503, "no_engine", f"The offline voice could not be started ({exc.strerror or exc}). "
                                             f"Reinstall it, or pick a provider in Settings → Voice.") from None
    try:
        out, err = proc.communicate(command.stdin, timeout=cap)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise SpeechFailed(504, "engine_timeout", f"The offline voice did not finish within {cap:g} s, the most "
                                                  f"Numi waits; it was stopped. Try a shorter text.") from None
    except BaseException:
        _kill(proc)
        raise
    said = err.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        if voice and ("voice" in said.lower() or proc.returncode == 3):
            raise SpeechFailed(422, "unknown_voice", f"The offline voice has no voice named {voice!r}. Pick one "
                                                     f"from Settings → Voice.", field="voice")
        raise SpeechFailed(502, "engine_failed", f"The offline voice failed (exit status {proc.returncode})"
                                                 f"{': ' + repr(said[:300]) if said else ''}. Try again, or pick a "
                                                 f"provider in Settings → Voice.")
    if len(out) > OUTPUT_CAP:
        raise SpeechFailed(502, "engine_failed", "The offline voice wrote more audio than Numi serves at once. "
                                                 "Try a shorter text.")
    if command.output is None and not out:
        raise SpeechFailed(502, "engine_failed", "The offline voice wrote no audio. Try again, or pick a provider "
                                                 "in Settings → Voice.")
    return out


def _hidden() -> dict[str, Any]:
    """Popen's arguments that put the engine in its own process group (killed whole) and, on Windows,
    open no console window."""
    if sys.platform == "win32":
        return {"creationflags": getattr(subprocess, "CREATE_NO_WINDOW", 0)
                | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    return {"start_new_session": True}


def _kill(proc: subprocess.Popen) -> None:
    """End the engine and anything it started, and reap it."""
    try:
        if sys.platform == "win32":
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.communicate()
