"""The offline voices' commands, built as pure functions (tested on every platform) and their voice lists read.

Text never appears on a command line: espeak-ng reads it on stdin, `say` and the Windows script from a
temporary file whose path Numi made. A voice name does go on espeak-ng's and `say`'s command lines, as
an argument of its own after its option, and only once `voice_problem` finds nothing wrong with it (it
cannot start with "-", hold a path or a control character); Windows gets it through the environment.

- Linux: `espeak-ng --stdout -s <wpm> [-v <voice>]` (GPL: run only as a separate program), WAV on stdout.
- macOS: `say -o <out.aiff> -f <text file> -r <wpm> [-v <voice>]`, AIFF converted to WAV in Python.
- Windows: PowerShell's System.Speech SpeechSynthesizer.SetOutputToWaveFile, a fixed script.
"""
from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

ESPEAK_WPM = 175  # espeak-ng's own default rate, for speed 1
SAY_WPM = 180  # roughly macOS's default rate
VOICE_MAX = 100


@dataclass(frozen=True)
class Command:
    """One engine run: its argv, what goes to its stdin, extra environment, and where its audio lands."""
    argv: list[str]
    stdin: bytes = b""
    env: dict[str, str] = field(default_factory=dict)
    output: str | None = None  # a file the engine writes; None: its stdout is the audio


def voice_problem(voice: str) -> str | None:
    """Why `voice` cannot be handed to an engine (a sentence), or None."""
    if not voice.strip():
        return "Must not be empty."
    if len(voice) > VOICE_MAX:
        return f"Must be at most {VOICE_MAX} characters."
    if voice.startswith("-") or voice != voice.strip():
        return "A voice name does not start with '-' or a space."
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in voice) or re.search(r"[/\\]|\.\.", voice):
        return "A voice name holds no path and no control characters. Pick one from Settings → Voice."
    return None


def plain(text: str) -> str:
    """The text with control characters (an engine may read some as commands) turned into spaces."""
    return "".join(c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf") else " " for c in text)


def espeak(text: str, voice: str | None, speed: float) -> Command:
    argv = ["espeak-ng", "--stdout", "-s", str(_wpm(ESPEAK_WPM, speed, 80, 450))]
    if voice:
        argv += ["-v", voice]
    return Command(argv, stdin=plain(text).encode("utf-8"))


def say(text_file: str, out_file: str, voice: str | None, speed: float) -> Command:
    """`say`; the caller writes the text (UTF-8) to `text_file` first."""
    argv = ["say", "-o", out_file, "-f", text_file, "-r", str(_wpm(SAY_WPM, speed, 90, 500))]
    if voice:
        argv += ["-v", voice]
    return Command(argv, output=out_file)


# Everything it is told comes through the environment: no text, path or name is ever part of the
# script, so nothing needs quoting. Exit 3: the voice is not installed.
WINDOWS_SCRIPT = "; ".join([
    "$ErrorActionPreference = 'Stop'",
    "Add-Type -AssemblyName System.Speech",
    "$s = New-Object System.Speech.Synthesis.SpeechSynthesizer",
    "if ($env:NUMI_TTS_VOICE) { try { $s.SelectVoice($env:NUMI_TTS_VOICE) } "
    "catch { [Console]::Error.WriteLine('voice not installed'); exit 3 } }",
    "$s.Rate = [int]$env:NUMI_TTS_RATE",
    "$text = [IO.File]::ReadAllText($env:NUMI_TTS_TEXT, [Text.Encoding]::UTF8)",
    "$s.SetOutputToWaveFile($env:NUMI_TTS_OUT)",
    "$s.Speak($text)",
    "$s.Dispose()",
])
WINDOWS_VOICES_SCRIPT = ("Add-Type -AssemblyName System.Speech; "
                         "$s = New-Object System.Speech.Synthesis.SpeechSynthesizer; "
                         "[Console]::OutputEncoding = [Text.Encoding]::UTF8; "
                         "foreach ($v in $s.GetInstalledVoices()) { if ($v.Enabled) { "
                         "$i = $v.VoiceInfo; [Console]::Out.WriteLine($i.Name + \"`t\" + $i.Culture.Name) } }")
POWERSHELL = ["powershell", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"]


def windows(text_file: str, out_file: str, voice: str | None, speed: float) -> Command:
    """SAPI through PowerShell; the caller writes the text (UTF-8) to `text_file` first."""
    env = {"NUMI_TTS_TEXT": text_file, "NUMI_TTS_OUT": out_file, "NUMI_TTS_VOICE": voice or "",
           "NUMI_TTS_RATE": str(sapi_rate(speed))}
    return Command([*POWERSHELL, WINDOWS_SCRIPT], env=env, output=out_file)


def sapi_rate(speed: float) -> int:
    """SAPI's Rate (-10…10, about 3× faster at 10 and 3× slower at -10) for a speed factor."""
    return max(-10, min(10, round(10 * math.log(speed) / math.log(3))))


def _wpm(base: int, speed: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, round(base * speed)))


def voices_command(platform: str) -> list[str]:
    """The command that lists the platform's voices."""
    if platform == "darwin":
        return ["say", "-v", "?"]
    if platform == "win32":
        return [*POWERSHELL, WINDOWS_VOICES_SCRIPT]
    return ["espeak-ng", "--voices"]


def espeak_voices(listing: str) -> list[dict]:
    """`espeak-ng --voices` as [{"id", "label"}]: the language code (what -v takes) and the voice's name."""
    out, seen = [], set()
    for line in listing.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 4 or not parts[0].isdigit() or parts[1] in seen:
            continue
        seen.add(parts[1])
        out.append({"id": parts[1], "label": f"{parts[3].replace('_', ' ')} ({parts[1]})"})
    return out


SAY_LINE = re.compile(r"^(?P<name>.+?)\s+(?P<lang>[a-z]{2,3}[_-][A-Za-z0-9_-]+)(?:\s+#.*)?$")


def say_voices(listing: str) -> list[dict]:
    """`say -v ?` ("Alex   en_US    # Most people …", names may hold spaces) as [{"id", "label"}]."""
    out = []
    for line in listing.splitlines():
        found = SAY_LINE.match(line.rstrip())
        if found:
            name = found["name"].strip()
            out.append({"id": name, "label": f"{name} ({found['lang']})"})
    return out


def windows_voices(listing: str) -> list[dict]:
    """The voices script's "name<TAB>culture" lines as [{"id", "label"}]."""
    out = []
    for line in listing.splitlines():
        name, _, culture = line.strip().partition("\t")
        if name:
            out.append({"id": name, "label": f"{name} ({culture})" if culture else name})
    return out
