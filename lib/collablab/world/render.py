"""Render an agent's current view of the symbolic household as an image.

MECoBench's agents see 4x256x256 camera views (appendix B.1); without Unity we draw what
the agent perceives symbolically: its room, the furniture, the visible objects with their
ids, and what it holds. Multimodal models receive this image (leader with vision).

:func:`agent_views` is the one door every image an LLM agent receives goes through (the acting
agent's view, the decoder's raw and annotated views, the leader's combined image): the paper's
egocentric cameras (B.1, :mod:`.camera` via :meth:`Household.views`). :func:`render_view` is the
older schematic (labelled boxes, no perspective), kept for quick looks.
"""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

from .household import Household

SIZE = 256


def render_view(world: Household, agent: int, size: int = SIZE, ids: bool = True) -> Image.Image:
    """A size x size picture of what ``agent`` perceives now; ``ids=False`` draws the class
    names without the object ids (the raw view an acting agent sees, B.4)."""

    def label(v: Any) -> str:
        return f"{v['class_name']} ({v['id']})" if ids else str(v["class_name"])

    obs = world.observe(agent)
    img = Image.new("RGB", (size, size), (245, 242, 232))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, size - 1, 18], fill=(60, 70, 90))
    where = f"door {obs['at_door']}" if obs["at_door"] is not None else obs["room"]
    d.text((4, 4), f"Agent {agent} - {where}", fill=(255, 255, 255))
    furniture = [v for v in obs["visible"] if "GRABBABLE" not in v.get("properties", [])]
    objects = [v for v in obs["visible"] if "GRABBABLE" in v.get("properties", [])]
    by_loc: dict[Any, list[dict[str, Any]]] = {}
    for o in objects:
        by_loc.setdefault(o.get("inside") or o.get("on"), []).append(o)
    cols = 3
    cell_w, cell_h = (size - 8) // cols, 44
    for i, f in enumerate(furniture[: cols * 4]):
        x, y = 4 + (i % cols) * cell_w, 24 + (i // cols) * (cell_h + 4)
        closed = "CLOSED" in f["states"]
        d.rectangle([x, y, x + cell_w - 4, y + cell_h], outline=(90, 60, 30),
                    fill=(200, 190, 170) if closed else (225, 215, 195))
        d.text((x + 3, y + 2), label(f)[:22], fill=(40, 30, 20))
        for j, o in enumerate(by_loc.get(f["id"], [])[:2]):
            d.text((x + 6, y + 16 + 12 * j), label(o)[:20], fill=(150, 20, 20))
    held = ", ".join(label(h) for h in obs["holding"]) or "nothing"
    d.rectangle([0, size - 20, size - 1, size - 1], fill=(60, 70, 90))
    d.text((4, size - 16), f"holding: {held}"[:40], fill=(255, 255, 255))
    return img


def agent_views(world: Household, agent: int) -> tuple[Image.Image, Image.Image]:
    """``(raw, annotated)`` views of ``agent`` now, each 1024 x 256 (front, back, left, right;
    mecobench.txt B.1): what the acting agent sees, and the decoder's copy with the box, class
    name and id of every object the agent may act on (B.4: "both the original and bbox-annotated
    views"; Fig. 25: "1) Raw RGB image. 2) Bbox-annotated image with class names and object_ids").
    Annotated are the observation's visible candidates that show with at least one pixel: the
    text observation's rule decides what is a candidate (``Household(seen=...)``)."""
    v = world.views(agent)  # cached per pose: hand out a copy, never the cached picture
    return v.image.copy(), v.annotated([o["id"] for o in world.observe(agent)["visible"]])


def image_boxes(world: Household, agent: int) -> dict[int, list[int]]:
    """Per node drawn in ``agent``'s views, its box ``[x0, y0, x1, y1]`` in the 1024 x 256 image,
    in the view where it shows most (Fig. 18's candidates carry one ``bbox`` each)."""
    v = world.views(agent)
    size = v.views[0].width
    out: dict[int, list[int]] = {}
    for nid, per_view in v.boxes.items():
        shown = [(v.pixels[nid][k], k, b) for k, b in enumerate(per_view) if b is not None and v.pixels[nid][k] > 0]
        if shown:
            _, k, (x0, y0, x1, y1) = max(shown, key=lambda t: (t[0], -t[1]))
            out[nid] = [int(x0) + k * size, int(y0), int(x1) + k * size, int(y1)]
    return out


def combined_view(world: Household, agents: list[int] | None = None) -> Image.Image:
    """Every agent's view stacked vertically, leader first (Fig. 22's combined image)."""
    agents = list(range(world.n_agents)) if agents is None else agents
    views = [render_view(world, a) for a in agents]
    out = Image.new("RGB", (SIZE, SIZE * len(views)))
    for i, v in enumerate(views):
        out.paste(v, (0, SIZE * i))
    return out
