"""Four egocentric camera views of axis-aligned boxes: a pure-CPU numpy z-buffer renderer.

MECoBench's camera (mecobench.txt appendix B.1): "Each observation view is rendered at 256 x 256
pixels, resulting in a four-view concatenated observation of 256 x 1024. The four views are
arranged in the order: front, back, left, and right. Both horizontal and vertical fields of view
are set to 90 degrees. The agent model height is 1.8 m, and the camera is mounted at the same
height with a forward offset of 0.15 m relative to the agent's position. The camera is pitched
downward by 30 degrees". The decoder gets "both the original and bbox-annotated views" (B.4,
Fig. 18), the latter a "Bbox-annotated image with class names and object_ids" (Fig. 29).

This module knows boxes, not households (:mod:`.eyes` turns a household into boxes). Every pixel
is a ray from the camera; each box is intersected with the rays inside its projected rectangle
(the slab test), the nearest hit wins (a z-buffer). Decisions the paper leaves open:

- coordinates are VirtualHome's (Unity: y up, left-handed), so the right of a heading ``(hx, hz)``
  is ``(hz, -hx)``; left and right views look 90 degrees to those sides;
- the 0.15 m forward offset is along each view's own direction (a head turning on the body);
- a ``solid`` box shows its outside faces; an ``interior`` box (the room) and a ``cutaway`` box
  (an open container) show their far inside faces, so what lies within them is in front and seen;
- colours are stable per class (md5 of the class name -> hue), shaded per face (tops brightest)
  and edges between faces darkened so boxes read as 3-D; the room's floor, walls and ceiling have
  fixed colours; nothing at all (above the walls) is dark grey.
"""

from __future__ import annotations

import colorsys
import functools
import hashlib
import io
import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
from PIL import Image, ImageDraw

from .views import focal_length_px

VIEW_NAMES = ("front", "back", "left", "right")
KINDS = ("solid", "cutaway", "interior")
NOTHING = -1  # id of pixels that hit no box
ROOM = -2  # id of pixels on the room's floor, walls and ceiling (not an object)

Vec3 = tuple[float, float, float]
Box2 = tuple[int, int, int, int]  # x0, y0, x1, y1 inclusive, in one view's pixels


@dataclass(frozen=True)
class CameraRig:
    """The paper's camera (appendix B.1); every number is a parameter."""

    image_px: int = 256
    fov_deg: float = 90.0
    height_m: float = 1.8
    forward_m: float = 0.15
    pitch_deg: float = 30.0
    near_m: float = 0.05

    def __post_init__(self) -> None:
        if isinstance(self.image_px, bool) or not isinstance(self.image_px, int) or self.image_px < 8:
            raise ValueError(f"camera rig: image_px must be an integer >= 8, got {self.image_px!r}")
        if not 0 < self.fov_deg < 180:
            raise ValueError(f"camera rig: fov_deg must be in (0, 180), got {self.fov_deg!r}")
        for name in ("height_m", "near_m"):
            if not getattr(self, name) > 0:
                raise ValueError(f"camera rig: {name} must be positive, got {getattr(self, name)!r}")
        if not -90 < self.pitch_deg < 90:
            raise ValueError(f"camera rig: pitch_deg must be in (-90, 90), got {self.pitch_deg!r}")

    @property
    def focal_px(self) -> float:
        """Focal length in pixels (:func:`.views.focal_length_px`): 128 px for the paper's camera."""
        return focal_length_px(self.image_px, self.fov_deg)


PAPER_RIG = CameraRig()


@dataclass(frozen=True)
class Box:
    """One axis-aligned box to draw: ``lo``/``hi`` corners in metres, ``kind`` one of :data:`KINDS`.

    ``node`` is the graph id its pixels count for (:data:`ROOM` for the room itself)."""

    node: int
    class_name: str
    lo: Vec3
    hi: Vec3
    kind: str = "solid"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"box {self.node}: kind {self.kind!r} is not allowed; allowed: {', '.join(KINDS)}")
        if any(h < lo for lo, h in zip(self.lo, self.hi)):
            raise ValueError(f"box {self.node}: hi {self.hi} is below lo {self.lo}")


def class_colour(class_name: str) -> tuple[int, int, int]:
    """A stable colour per class: md5 of the name -> hue, saturation and value in pleasant ranges."""
    h = hashlib.md5(class_name.encode("utf-8")).digest()
    hue = h[0] / 256 + h[1] / 65536
    sat = 0.40 + 0.35 * h[2] / 255
    val = 0.70 + 0.25 * h[3] / 255
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return int(round(r * 255)), int(round(g * 255)), int(round(b * 255))


FLOOR_RGB = np.array([176, 150, 118], dtype=np.float64)
WALL_RGB = np.array([226, 222, 208], dtype=np.float64)
CEILING_RGB = np.array([240, 240, 236], dtype=np.float64)
NOTHING_RGB = (40, 40, 46)
# face shade by (axis, facing up/+): x faces 0.82, y top 1.0 / bottom 0.55, z faces 0.68
_SHADE = {(0, 0): 0.82, (0, 1): 0.78, (1, 0): 0.55, (1, 1): 1.0, (2, 0): 0.68, (2, 1): 0.72}
_SHADES = np.array([_SHADE[(a, s)] for a in range(3) for s in range(2)])  # indexed by axis * 2 + plus


def view_directions(heading: tuple[float, float]) -> list[tuple[float, float]]:
    """Horizontal unit directions of the four views, in the paper's order: front, back, left, right."""
    hx, hz = heading
    n = math.hypot(hx, hz)
    if not n > 0 or not math.isfinite(n):
        raise ValueError(f"heading: must be a non-zero finite (x, z) vector, got {heading!r}")
    hx, hz = hx / n, hz / n
    return [(hx, hz), (-hx, -hz), (-hz, hx), (hz, -hx)]


@dataclass
class Views:
    """An agent's four views: images, per-node visible pixels and 2-D boxes per view."""

    image: Image.Image  # 1024 x 256, front | back | left | right
    views: tuple[Image.Image, ...]  # four 256 x 256
    ids: np.ndarray  # (4, 256, 256) node id per pixel; NOTHING / ROOM elsewhere
    pixels: dict[int, tuple[int, int, int, int]]  # node -> visible pixels per view (after occlusion)
    boxes: dict[int, tuple[Box2 | None, ...]]  # node -> its 2-D box per view (None: not in that view)
    labels: dict[int, str] = field(default_factory=dict)  # node -> class name

    def total(self, node: int) -> int:
        """Visible pixels of ``node`` summed over the four views (0 when not drawn or hidden)."""
        return sum(self.pixels.get(node, (0, 0, 0, 0)))

    def annotated(self, nodes: Iterable[int] | None = None) -> Image.Image:
        """A copy of :attr:`image` with each node's box, class name and id drawn in every view it
        shows in (B.4's "bbox-annotated image with class names and object_ids"); ``nodes``: which
        (default: every node drawn with a visible pixel; door-jamb aliases share their door's box)."""
        drawn = set(np.unique(self.ids[self.ids >= 0]).tolist())
        chosen = sorted(drawn) if nodes is None else sorted(set(nodes) & set(self.pixels))
        img = self.image.copy()
        d = ImageDraw.Draw(img)
        size = self.views[0].width
        for nid in chosen:
            rgb = class_colour(self.labels.get(nid, ""))
            ink = tuple(max(0, c - 120) for c in rgb)
            for k, b in enumerate(self.boxes[nid]):
                if b is None:
                    continue
                x0, y0, x1, y1 = b
                off = k * size
                d.rectangle([x0 + off, y0, x1 + off, y1], outline=(255, 255, 0), width=1)
                text = f"{self.labels.get(nid, '?')} {nid}"
                tx, ty = x0 + off + 1, max(0, y0 - 11) if y0 >= 11 else y0 + 1
                w = d.textlength(text)
                d.rectangle([tx - 1, ty, min(tx + w, off + size - 1), ty + 10], fill=(255, 255, 0))
                d.text((tx, ty - 1), text, fill=ink)
        return img


def png_bytes(img: Image.Image) -> bytes:
    """PNG bytes of an image, deterministic (no metadata, fixed compression): same pose, same bytes."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6, optimize=False)
    return buf.getvalue()


@functools.lru_cache(maxsize=64)
def _rays(rig: CameraRig, forward: tuple[float, float]) -> tuple[np.ndarray, ...]:
    """One view's ray directions per axis (three (n, n) planes, scaled so the camera depth is 1),
    their inverses (zeros nudged to 1e-12) and the camera's forward, up and right vectors."""
    n, f = rig.image_px, rig.focal_px
    fx, fz = forward
    p = math.radians(rig.pitch_deg)
    fwd = np.array([fx * math.cos(p), -math.sin(p), fz * math.cos(p)])
    up = np.array([fx * math.sin(p), math.cos(p), fz * math.sin(p)])
    right = np.array([fz, 0.0, -fx])
    c = (np.arange(n) + 0.5 - n / 2) / f
    u, v = c[None, :], c[:, None]  # columns to the right, rows downwards
    planes = [fwd[k] + u * right[k] - v * up[k] for k in range(3)]
    inv = [1.0 / np.where(pl == 0.0, 1e-12, pl) for pl in planes]
    out = (*planes, *inv, fwd, up, right)
    for a in out:
        a.setflags(write=False)
    return out


def _rect(rig: CameraRig, eye: np.ndarray, fwd: np.ndarray, right: np.ndarray, up: np.ndarray,
          lo: np.ndarray, hi: np.ndarray) -> tuple[int, int, int, int] | None:
    """Pixel rectangle (r0, r1, c0, c1, end-exclusive) that a box can cover, None when off-screen."""
    n, f = rig.image_px, rig.focal_px
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]) - eye
    depth = corners @ fwd
    if (depth <= rig.near_m).all():
        return None
    if (depth <= rig.near_m).any():
        return 0, n, 0, n
    cols = corners @ right / depth * f + n / 2
    rows = -(corners @ up) / depth * f + n / 2
    c0, c1 = max(0, int(math.floor(cols.min()))), min(n, int(math.ceil(cols.max())) + 1)
    r0, r1 = max(0, int(math.floor(rows.min()))), min(n, int(math.ceil(rows.max())) + 1)
    if c0 >= c1 or r0 >= r1:
        return None
    return r0, r1, c0, c1


def render_view(boxes: Sequence[Box], eye: Vec3, forward: tuple[float, float],
                rig: CameraRig = PAPER_RIG) -> tuple[np.ndarray, np.ndarray]:
    """One view: (rgb uint8 (n, n, 3), node id per pixel (n, n)) of ``boxes`` seen from ``eye``."""
    n = rig.image_px
    dx, dy, dz, ix, iy, iz, fwd, up, right = _rays(rig, (float(forward[0]), float(forward[1])))
    e = np.asarray(eye, dtype=np.float64)
    zbuf = np.full((n, n), np.inf)
    which = np.full((n, n), -1, dtype=np.int64)  # index into boxes
    face = np.zeros((n, n), dtype=np.int64)  # axis * 2 + (the seen face's normal points +)
    for i, b in enumerate(boxes):
        lo, hi = np.asarray(b.lo, dtype=np.float64), np.asarray(b.hi, dtype=np.float64)
        r = _rect(rig, e, fwd, right, up, lo, hi)
        if r is None:
            continue
        sl = (slice(r[0], r[1]), slice(r[2], r[3]))
        ts = []
        for k, inv in enumerate((ix, iy, iz)):
            a, c = (lo[k] - e[k]) * inv[sl], (hi[k] - e[k]) * inv[sl]
            ts.append((np.minimum(a, c), np.maximum(a, c)))
        tnear = np.maximum(np.maximum(ts[0][0], ts[1][0]), ts[2][0])
        tfar = np.minimum(np.minimum(ts[0][1], ts[1][1]), ts[2][1])
        t = tnear if b.kind == "solid" else tfar  # interior and cutaway: the far inside faces
        win = (tnear <= tfar) & (t > rig.near_m) & (t < zbuf[sl])
        if not win.any():
            continue
        tw = t[win]
        pick = 0 if b.kind == "solid" else 1
        axis = np.where(ts[0][pick][win] == tw, 0, np.where(ts[1][pick][win] == tw, 1, 2))
        dsign = np.where(axis == 0, dx[sl][win], np.where(axis == 1, dy[sl][win], dz[sl][win]))
        zbuf[sl][win] = tw
        which[sl][win] = i
        face[sl][win] = axis * 2 + (dsign < 0)  # the face seen has its normal against the ray
    # colours: per box a base colour, per face a shade; the room's floor, ceiling and walls fixed
    base = np.array([class_colour(b.class_name) for b in boxes] + [NOTHING_RGB], dtype=np.float64)
    gain = np.array([0.7 if b.kind == "cutaway" else 1.0 for b in boxes] + [1.0])
    interior = np.array([b.kind == "interior" for b in boxes] + [False])
    w = np.where(which < 0, len(boxes), which)
    shade = np.where(which < 0, 1.0, _SHADES[face] * gain[w])
    rgb = base[w] * shade[..., None]
    room = interior[w]
    if room.any():
        wall = WALL_RGB[None, :] * np.where(face[room] // 2 == 0, 0.94, 0.84)[:, None]
        f = face[room][:, None]
        rgb[room] = np.where(f == 3, FLOOR_RGB[None, :], np.where(f == 2, CEILING_RGB[None, :], wall))
    # darken edges: where the drawn box or face changes between neighbouring pixels
    key = which * 16 + face
    edge = np.zeros((n, n), dtype=bool)
    edge[:, 1:] |= key[:, 1:] != key[:, :-1]
    edge[1:, :] |= key[1:, :] != key[:-1, :]
    edge &= which >= 0
    rgb[edge] *= 0.72
    node = np.array([b.node for b in boxes] + [NOTHING], dtype=np.int64)
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8), node[w]


def render(boxes: Sequence[Box], position: tuple[float, float], floor_y: float, heading: tuple[float, float],
           rig: CameraRig = PAPER_RIG) -> Views:
    """The four views (front, back, left, right) of someone standing at ``position`` (x, z) on a
    floor at height ``floor_y`` facing ``heading`` (x, z): camera ``rig.height_m`` above the floor,
    ``rig.forward_m`` ahead along each view, pitched down ``rig.pitch_deg`` (appendix B.1)."""
    n = rig.image_px
    labels = {b.node: b.class_name for b in boxes if b.node >= 0}
    imgs, id_views = [], []
    for fx, fz in view_directions(heading):
        eye = (position[0] + rig.forward_m * fx, floor_y + rig.height_m, position[1] + rig.forward_m * fz)
        rgb, ids = render_view(boxes, eye, (fx, fz), rig)
        imgs.append(Image.fromarray(rgb, "RGB"))
        id_views.append(ids)
    ids_all = np.stack(id_views)
    pixels: dict[int, list[int]] = {}
    boxes2: dict[int, list[Box2 | None]] = {}
    for k, ids in enumerate(id_views):
        rows, cols = np.nonzero(ids >= 0)
        if rows.size == 0:
            continue
        vals = ids[rows, cols]
        uniq, inv, counts = np.unique(vals, return_inverse=True, return_counts=True)
        rmin = np.full(uniq.size, n); rmax = np.full(uniq.size, -1)
        cmin = np.full(uniq.size, n); cmax = np.full(uniq.size, -1)
        np.minimum.at(rmin, inv, rows); np.maximum.at(rmax, inv, rows)
        np.minimum.at(cmin, inv, cols); np.maximum.at(cmax, inv, cols)
        for i, nid in enumerate(uniq.tolist()):
            pixels.setdefault(nid, [0, 0, 0, 0])[k] = int(counts[i])
            box = (int(cmin[i]), int(rmin[i]), int(cmax[i]), int(rmax[i]))
            boxes2.setdefault(nid, [None, None, None, None])[k] = box
    image = Image.new("RGB", (4 * n, n))
    for k, im in enumerate(imgs):
        image.paste(im, (k * n, 0))
    return Views(image=image, views=tuple(imgs), ids=ids_all,
                 pixels={k: tuple(v) for k, v in pixels.items()},  # type: ignore[misc]
                 boxes={k: tuple(v) for k, v in boxes2.items()}, labels=labels)
