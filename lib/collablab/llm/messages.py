"""Helpers to build OpenAI chat messages, including images for multimodal models.

Images travel as OpenAI content parts ``{"type": "image_url", "image_url": {"url":
"data:image/png;base64,..."}}`` (OpenAI, vLLM and llama.cpp servers accept this form).
In the cache key the image bytes are replaced by their SHA-256 (see ``cache.py``).
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, Union

__all__ = [
    "ImageLike",
    "image_part",
    "image_data_url",
    "text_part",
    "system_message",
    "user_message",
    "assistant_message",
    "as_messages",
]

ImageLike = Union[bytes, bytearray, "os.PathLike[str]", str, Any]  # Any: a PIL.Image.Image

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _sniff_mime(data: bytes) -> str:
    if data.startswith(_PNG_MAGIC):
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError("image bytes are not PNG/JPEG/GIF/WEBP")


def image_data_url(image: ImageLike) -> str:
    """A ``data:`` URL for PNG/JPEG bytes, a file path, or a PIL image (encoded as PNG)."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
    elif isinstance(image, (str, os.PathLike)):
        if isinstance(image, str) and image.startswith("data:"):
            return image
        data = Path(image).read_bytes()
    elif hasattr(image, "save") and hasattr(image, "mode"):  # PIL.Image.Image
        buf = io.BytesIO()
        img = image
        if img.mode not in ("RGB", "RGBA", "L", "LA", "P", "1", "I;16", "I"):
            img = img.convert("RGBA")
        img.save(buf, format="PNG")
        data = buf.getvalue()
    else:
        raise TypeError(f"unsupported image type {type(image).__name__}: "
                        "pass PNG/JPEG bytes, a path or a PIL image")
    mime = _sniff_mime(data)
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_part(image: ImageLike, *, detail: str | None = None) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part (``detail``: "low", "high" or "auto")."""
    part: dict[str, Any] = {"type": "image_url", "image_url": {"url": image_data_url(image)}}
    if detail is not None:
        part["image_url"]["detail"] = detail
    return part


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": str(text)}


def system_message(text: str) -> dict[str, Any]:
    return {"role": "system", "content": str(text)}


def assistant_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": str(text)}


def user_message(text: str, images: Iterable[ImageLike] = (), *,
                 detail: str | None = None) -> dict[str, Any]:
    """A user message; with images the content becomes a list of parts (text first)."""
    imgs = list(images)
    if not imgs:
        return {"role": "user", "content": str(text)}
    parts = [text_part(text)] + [image_part(im, detail=detail) for im in imgs]
    return {"role": "user", "content": parts}


def as_messages(messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Accept a plain string (one user message), one message dict, or a list of them."""
    if isinstance(messages, str):
        return [user_message(messages)]
    if isinstance(messages, Mapping):
        return [dict(messages)]
    out = [dict(m) for m in messages]
    for m in out:
        if "role" not in m:
            raise ValueError(f"message without a role: {m!r}"[:200])
    return out
