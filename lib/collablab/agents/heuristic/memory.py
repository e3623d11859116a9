"""The heuristic agent's side of the shared-memory protocol (Fig. 29 memory block)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import Utterance


@dataclass
class Known:
    cls: str
    room: str
    loc: int | None  # furniture id it is on/inside
    loc_cls: str | None
    rel: str  # "on" | "inside"
    step: int


class SharedMemoryMixin:
    """Read the shared block before acting, write claims/holdings/sightings after."""

    # -- shared memory (Fig. 29) -------------------------------------------------------------------------
    def _read_memory(self, mem: dict[str, Any]) -> None:
        g = mem.get("global", {})
        for c in g.get("claims", []):
            if c.get("agent") != self.me and c.get("state") in ("planned", "holding", "delivering"):
                oid = c.get("id")
                if isinstance(oid, int):
                    self._claim(oid, int(c["agent"]))
                    if self.my_claim == oid and c["agent"] < self.me:
                        self.my_claim = None
        for room, block in mem.items():
            if room == "global":
                continue
            for o in block.get("objects", []):
                oid = o.get("id")
                if isinstance(oid, int) and oid not in self.known and o.get("status") == "seen":
                    loc = o.get("location_id")
                    self.known[oid] = Known(o["name"], room, loc if isinstance(loc, int) else None,
                                            o.get("location"), o.get("relation", "on"), self.step)
            for fid in block.get("checked", []):  # furniture ids someone looked at closely
                if isinstance(fid, int):
                    self.checked.setdefault(fid, self.step)
        for a, status in g.get("agent_status", {}).items():
            a = int(a)
            if a == self.me or not isinstance(status, dict):
                continue
            self.offers = {d: o for d, o in self.offers.items() if o[0] != a}  # the status is its latest
            if status.get("offering_at_door") is not None:
                oid = status.get("offering_id")
                self.offers[int(status["offering_at_door"])] = (a, self.step, oid if isinstance(oid, int) else None)
            if status.get("receiving_at_door") is not None:
                self.ready[int(status["receiving_at_door"])] = (a, self.step)
        for a, ids in g.get("agent_holding", {}).items():
            if int(a) != self.me:
                self.teammate_holding[int(a)] = [x.get("id") for x in ids if isinstance(x, dict)]
        if g.get("task_complete_claimed") and self.talk_rng.random() < self.profile.p_believe_done:
            self.done_believed = True

    def write_memory(self, mem: dict[str, Any]) -> Utterance | None:
        room = self.obs["room"]
        g = mem.setdefault("global", {})
        block = mem.setdefault(room, {"exploration": "explored", "objects": [], "checked": []})
        block["exploration"] = "explored"
        vis = self._visible()
        mine = {oid: {"name": k.cls, "id": oid, "location": k.loc_cls, "location_id": k.loc, "relation": k.rel,
                      "status": "seen"}
                for oid, k in sorted(self.known.items()) if k.room == room and oid in vis}
        # keep what teammates wrote unless this agent knows the object is gone (seen and forgotten)
        kept = {o["id"]: o for o in block.get("objects", [])
                if isinstance(o.get("id"), int) and (o["id"] in self.known or o["id"] not in self.cls_of)}
        block["objects"] = [v for _, v in sorted({**kept, **mine}.items())]
        block["checked"] = sorted(set(block.get("checked", [])) | {
            f for f in self.checked if self.furniture.get(f, ("", ""))[1] == room})
        g.setdefault("agent_locations", {})[str(self.me)] = room
        g.setdefault("agent_holding", {})[str(self.me)] = [
            {"name": self.believed.get(h["id"], h["class_name"]), "id": h["id"]} for h in self.obs["holding"]]
        offer = self._offering()
        g.setdefault("agent_status", {})[str(self.me)] = {
            "offering_at_door": offer[0] if offer else None, "offering_id": offer[2] if offer else None,
            "receiving_at_door": self.obs.get("at_door") if self._awaiting_door() is not None else None,
        }
        claims = [c for c in g.get("claims", []) if c.get("agent") != self.me]
        if self.my_claim is not None and self.my_claim in self.known:
            k = self.known[self.my_claim]
            claims.append({"agent": self.me, "object": k.cls, "id": self.my_claim, "source": k.room,
                           "target": (self._item(k.cls).target if self._item(k.cls) else None), "state": "planned"})
        g["claims"] = claims
        g["task_progress"] = {x["key"]: {"required": x["required"], "satisfied": x["satisfied"],
                                         "remaining": x["required"] - x["satisfied"]} for x in self._progress()}
        if self.done_believed:
            g["task_complete_claimed"] = True
        return None
