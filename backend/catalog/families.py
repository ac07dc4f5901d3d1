"""What Numi assumes about a model it has only the name of: a small table of known families.

Where a server does not state a model's capabilities (capabilities.py), a
discovered model gets its context window and capabilities from the first
pattern here that matches its name. An unknown name is assumed to take tools
(a chat model that does not is found out by its first refused call, which
turns them off: backend/catalog/tools_refused.py) and nothing else.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    pattern: str
    context_window: int | None
    max_output_tokens: int | None
    tools: bool = False
    vision: bool = False
    reasoning: bool = False


# First match wins, so narrower patterns come before the families they belong to.
FAMILIES = [
    Family(r"gpt-5", 400_000, 128_000, tools=True, vision=True, reasoning=True),
    Family(r"gpt-4\.1", 1_047_576, 32_768, tools=True, vision=True),
    Family(r"gpt-4o", 128_000, 16_384, tools=True, vision=True),
    Family(r"gpt-4-turbo", 128_000, 4_096, tools=True, vision=True),
    Family(r"gpt-4", 8_192, 8_192, tools=True),
    Family(r"gpt-3\.5", 16_385, 4_096, tools=True),
    Family(r"gpt-oss", 131_072, 32_768, tools=True, reasoning=True),
    Family(r"^o1-mini", 128_000, 65_536, reasoning=True),
    Family(r"^o[134](-|$)", 200_000, 100_000, tools=True, vision=True, reasoning=True),
    Family(r"claude-(opus|sonnet|haiku)-4|claude-3-7", 200_000, 64_000, tools=True, vision=True, reasoning=True),
    Family(r"claude-3-5", 200_000, 8_192, tools=True, vision=True),
    Family(r"claude", 200_000, 4_096, tools=True, vision=True),
    Family(r"deepseek-r1", 131_072, 32_768, reasoning=True),
    Family(r"deepseek-reasoner", 131_072, 65_536, reasoning=True),
    Family(r"deepseek", 131_072, 8_192, tools=True),
    Family(r"qwq|qwen3", 40_960, 32_768, tools=True, reasoning=True),
    Family(r"qwen.*vl", 32_768, 8_192, vision=True),
    Family(r"qwen", 32_768, 8_192, tools=True),
    Family(r"llama-?3\.2-?vision|llama-?3\.2.*vision|llama-?4", 131_072, 8_192, tools=True, vision=True),
    Family(r"llama-?3\.[123]", 131_072, 8_192, tools=True),
    Family(r"llama", 8_192, 4_096),
    Family(r"pixtral|mistral-small-3|mistral-medium", 131_072, 8_192, tools=True, vision=True),
    Family(r"mistral|mixtral|ministral|codestral", 32_768, 8_192, tools=True),
    Family(r"gemma-?3", 131_072, 8_192, vision=True),
    Family(r"gemma", 8_192, 4_096),
    Family(r"llava|moondream|bakllava", 4_096, 2_048, vision=True),
    Family(r"phi-?4", 16_384, 4_096),
    Family(r"phi", 4_096, 2_048),
]
UNKNOWN = Family("", None, None)

# Not chat models: skipped when listing kind openai (embeddings are skipped for every kind).
OPENAI_SKIP = re.compile(r"embed|tts|whisper|dall-e|moderation|transcribe|realtime|audio|gpt-image|"
                         r"davinci|babbage|search|computer-use|sora")
ANY_SKIP = re.compile(r"embed|rerank")
# Image models, by name, whatever the kind: never added as chat models; discovery lists them apart, for
# Settings → Images (CONTRACT §13). OpenAI's GPT image and DALL·E models; Stable Diffusion and FLUX on
# OpenAI-compatible servers (LocalAI and the like).
IMAGE_MODEL = re.compile(r"gpt-image|chatgpt-image|dall-e|stable-?diffusion|sdxl|\bsd-?3|\bsd-?turbo|(^|/)flux")


def family_of(api_model: str) -> Family:
    # Ids like "meta-llama/Llama-3.1-8B" or "library/qwen2.5:7b": judge by the last part.
    name = api_model.lower().rsplit("/", 1)[-1]
    for family in FAMILIES:
        if re.search(family.pattern, name):
            return family
    return UNKNOWN


def skip(kind: str, api_model: str) -> bool:
    """Not a chat model (an embedding, speech or image model…): never added to the catalog."""
    name = api_model.lower()
    return bool(ANY_SKIP.search(name) or IMAGE_MODEL.search(name) or (kind == "openai" and OPENAI_SKIP.search(name)))


def draws(api_model: str) -> bool:
    """An image model by its name (discovery lists it for Settings → Images, never as a chat model)."""
    return bool(IMAGE_MODEL.search(api_model.lower()))


_WORDS = {"gpt": "GPT", "oss": "OSS", "vl": "VL", "qwq": "QwQ", "deepseek": "DeepSeek", "r1": "R1",
          "it": "IT", "instruct": "Instruct", "gguf": "GGUF"}


def label_for(api_model: str) -> str:
    """A readable name from an id: gpt-4o-mini → GPT-4o Mini, llama3.1:8b → Llama3.1 8B."""
    name = api_model.rsplit("/", 1)[-1]
    if name.endswith(":latest"):
        name = name[: -len(":latest")]
    head = ""
    match = re.match(r"(?i)gpt-([0-9][\w.]*)", name)
    if match:  # keep GPT's hyphen: "GPT-4o", not "GPT 4o"
        head, name = f"GPT-{match.group(1)}", name[match.end():]
    words: list[str] = []
    for word in re.split(r"[-_:\s]+", name):
        if not word:
            continue
        if len(word) == 1 and word.isdigit() and words and re.fullmatch(r"\d", words[-1]):
            words[-1] += "." + word  # claude-opus-4-1 → "4.1"
        elif word.lower() in _WORDS:
            words.append(_WORDS[word.lower()])
        elif re.fullmatch(r"(?i)[\d.]+[bkm]", word):
            words.append(word.upper())  # sizes: 8b → 8B
        elif re.fullmatch(r"o\d.*", word) or word[0].isdigit():
            words.append(word)  # o3, o4-mini, 20240513
        else:
            words.append(word[0].upper() + word[1:])
    return " ".join(w for w in [head, *words] if w) or api_model
