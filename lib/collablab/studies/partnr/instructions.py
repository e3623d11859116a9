"""The clause grammar that compiles a PARTNR instruction template into a task record
(observe_share_predict.txt §4.1 runs PARTNR's validation tasks; the template shape is PARTNR's
``20_val_object_states.json``): the word tables, the tokens and the compiler. Propositions,
dependencies and constraints follow PARTNR's evaluation README (implemented by :mod:`.evaluation`);
objects are spawned on our houses through :mod:`.house_map`. :func:`compile_clauses` is the one
entry point; :mod:`.templates` checks a template and calls it.

The clause grammar (anything else raises ValueError naming the template id and the clause)
------------------------------------------------------------------------------------------
* Sentences end at ``. ? ! ; :``. Inside a sentence a clause starts where a run of connectives
  (``,``, ``and``, ``then``, ``finally``, ``also``, ``next``, ``lastly``, ``afterwards``,
  ``after that``) is followed by a verb of :data:`VERBS` (or "make sure" / "ensure"), or where
  ``after`` / ``before`` / ``once`` precede a verb ("after filling it"). Other ``and`` / ``,``
  join noun phrases. Leading "let's", "please", "first", "now" are dropped; a lone ``s`` after a
  word is a detached plural ("wardrobe s" -> "wardrobes").
* A clause is ``VERB [particle] OBJECTS [PP ...]``; prepositional phrases start at
  :data:`PREPOSITIONS`. OBJECTS are noun phrases joined by ``and`` / ``,``: determiners and
  quantifiers ("all of the", "both", "a", "two") then adjectives of :data:`ADJECTIVES` then a noun
  matched against the template's object classes: exact class, class ending in the noun
  ("charger" -> ``battery_charger``), class starting with it ("toys" -> ``toy_vehicle``...), or a
  category of :data:`CATEGORY_WORDS` ("dishes" -> plate, bowl, cup). A noun phrase means every
  object of the matched classes (``number`` = their count) unless it has a cardinal ("a cup",
  "two of the cups"). ``it`` / ``them`` / ``they`` refer to the direct object of the latest
  earlier clause (inside "next to it": the latest one other than the clause's own object).
* Move verbs (move, bring, take, put, place, set, arrange, ...): the destination is the ``to`` /
  ``into`` / ``onto`` phrase, else the ``on`` / ``in`` / ``inside`` / ``at`` phrases; a room gives
  ``is_in_room``, furniture ``is_on_top`` (``is_inside`` for "in"/"into" a container, or furniture
  without a surface), the floor ``is_on_floor``, "next to X" ``is_next_to`` and "next to each
  other" ``is_next_to`` / ``is_clustered``; one proposition per object group. "in the <room>"
  right after furniture qualifies the furniture. ``from`` phrases are sources (checked, no
  proposition). A move without destination ("take the dishes from the living room") must get one
  from a later clause about the same objects ("wash them in the kitchen").
* State verbs: clean / wash / rinse / dust / scrub / wipe -> ``is_clean`` (of objects or
  furniture), fill -> ``is_filled``, empty -> ``is_empty``, turn / power / switch on|off ->
  ``is_powered_on`` / ``is_powered_off``; objects must afford the state (:func:`.world.affordances`).
  Prepositional phrases after objects only identify them ("the lamp on the table", "the
  books in the living room"; "in the <room>" after furniture qualifies it: "the bench in the
  garage"); after a pronoun they say where the action happens: a room or
  furniture adds a placement ("wash them in the kitchen"), a faucet ("in the sink", "under the
  tap") and ``with`` phrases are instruments. "to <verb> ..." and "for ..." are purposes and skipped.
* "make sure (that) X is/are <clean|dirty|filled|empty|on|off|PP>" and "ensure ..." state a goal
  that must still hold at the end: those propositions get a TerminalSatisfactionConstraint. No
  other proposition gets one: a goal once reached counts (PARTNR's README: after "wash the mug
  and then fill it", ``is_clean`` need not survive), so "clean X and then fill X" is the
  temporal edge alone.
* "set up ...", "clean up ...", "tidy up ..." followed by a room or an indefinite noun phrase
  ("Set up a workspace.") frame the task and add nothing.
* Order: a clause marked ``then`` / ``finally`` / ``next`` / ``lastly`` / ``afterwards`` / ``after
  that`` gets TemporalConstraint edges from every proposition of the previous clause that has
  propositions to each of its own; ``after`` / ``once X`` puts X's propositions before those of
  its main clause (the next clause when it opens the sentence, else the previous one), ``before
  X`` after them. Propositions of one clause or joined by ``and`` / ``also`` are unordered.
* Dependencies: ``is_next_to`` / ``is_clustered`` are queried only while the latest placements
  of their objects hold (``while_satisfied``, PARTNR README example 2).
* Initial states: ``initial_furniture_state`` sets the states of all furniture of those classes
  in the mapped rooms; a state verb presupposes the opposite state at the start (clean -> dirty,
  fill -> empty, turn off -> on) for all its candidate handles unless the template says otherwise.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .evaluation import TaskEvaluation
from .house_map import (FURNITURE_WORDS, REGION_ROOMS, furniture_class, furniture_of_class,
                        region_rooms, resolve_furniture)
from .calls import mask_id
from .world import World, affordances

__all__ = ["ADJECTIVES", "CATEGORY_WORDS", "PREPOSITIONS", "VERBS", "compile_clauses"]

# -- the word tables ---------------------------------------------------------------------------
#: Category nouns -> the object classes they cover (besides the "toys" -> toy_* prefix rule).
CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "dish": ("plate", "bowl", "cup", "mug", "glass", "saucer", "dish"),
    "tableware": ("plate", "bowl", "cup", "mug", "glass", "saucer", "dish"),
    "utensil": ("fork", "knife", "spoon", "spatula", "ladle"), "cutlery": ("fork", "knife", "spoon"),
    "silverware": ("fork", "knife", "spoon"),
    "electronic": ("laptop", "phone", "tablet", "charger", "cable", "speaker", "camera"),
    "electronics": ("laptop", "phone", "tablet", "charger", "cable", "speaker", "camera"),
    "device": ("laptop", "phone", "tablet", "charger", "speaker", "camera"),
    "fruit": ("apple", "banana", "orange", "lemon", "lime", "peach", "pear", "fruit", "fruits"),
    "cookware": ("pan", "pot", "kettle"), "kitchenware": ("pan", "pot", "kettle", "jug", "bowl", "plate"),
}
#: Adjectives a noun phrase may carry before its noun (they do not select objects).
ADJECTIVES: frozenset[str] = frozenset((
    "dirty", "clean", "empty", "full", "filled", "used", "unused", "small", "little", "big", "large", "old",
    "new", "other", "remaining", "red", "blue", "green", "yellow", "white", "black", "brown", "grey", "gray",
    "pink", "purple", "wooden", "plastic", "metal", "favorite", "favourite"))
#: Verb lemma -> kind (move | clean | fill | empty | power | assert).
VERBS: dict[str, str] = {
    **{v: "move" for v in ("move", "bring", "take", "put", "place", "set", "arrange", "carry", "return",
                           "relocate", "transfer", "deliver", "store", "organize", "organise", "gather",
                           "collect", "tidy")},
    **{v: "clean" for v in ("clean", "wash", "rinse", "dust", "scrub", "wipe", "cleanse", "polish")},
    "fill": "fill", "refill": "fill", "empty": "empty", "drain": "empty",
    "turn": "power", "power": "power", "switch": "power", "make": "assert", "ensure": "assert",
}
#: Prepositions that open a phrase, longest first.
PREPOSITIONS: tuple[tuple[str, ...], ...] = (
    ("on", "top", "of"), ("next", "to"), ("close", "to"), ("out", "of"), ("to",), ("into",), ("onto",), ("on",),
    ("in",), ("inside",), ("within",), ("from",), ("off",), ("under",), ("at",), ("with",), ("beside",),
    ("near",), ("for",))
_STRONG = {"to", "into", "onto"}
_WEAK = {"on", "in", "inside", "within", "on top of", "at"}
_NEXT = {"next to", "beside", "near", "close to"}
_SOURCE = {"from", "off", "out of"}
_INSTRUMENT = {"with", "under"}
_TEMPORAL = {"then", "finally", "next", "afterwards", "afterward", "lastly", "subsequently"}
_CONNECTIVES = {",", "and", "also"} | _TEMPORAL
_LEADING = {"also", "first", "firstly", "now", "please", "let's", "lets", "just", "and", "then", ","} | _TEMPORAL
_SUBORDINATORS = {"after", "before", "once"}
_FRAMING = {"set", "clean", "tidy", "get"}
_DETERMINERS = {"the", "these", "those", "this", "that", "my", "your", "our", "his", "her", "their", "some", "any"}
_ALL = {"all", "every", "each", "both"}
_CARDINALS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
              "eight": 8, "nine": 9, "ten": 10}
_PRONOUNS = {"it", "them", "they", "these", "those"}
_RESULTS = {"clean": {"clean", "off", "down", "up"}, "fill": {"up"}, "empty": {"out"}, "power": set(),
            "move": set(), "assert": set()}
#: predicate and the state it presupposes at the start, for each state verb / adjective
_STATE_GOALS = {"clean": ("is_clean", "is_clean", False), "dirty": ("is_dirty", "is_clean", True),
                "fill": ("is_filled", "is_filled", False), "empty": ("is_empty", "is_filled", True),
                "on": ("is_powered_on", "is_powered_on", False), "off": ("is_powered_off", "is_powered_on", True)}
_ASSERT_WORDS = {"clean": "clean", "cleaned": "clean", "washed": "clean", "dirty": "dirty", "filled": "fill",
                 "full": "fill", "empty": "empty", "emptied": "empty", "on": "on", "off": "off"}
_PLACEMENTS = ("is_in_room", "is_on_top", "is_inside", "is_on_floor")
_IRREGULAR = {"knives": "knife", "shelves": "shelf", "leaves": "leaf", "children": "child"}
_TOKEN = re.compile(r"[A-Za-z]+(?:['\-][A-Za-z]+)*|\d+|[.,;:?!]")
_SENTENCE_END = {".", "?", "!", ";", ":"}
#: "to <verb> ..." after a clause is its purpose ("rinse them to make a pretend salad")
_PURPOSE = {"make", "have", "use", "play", "keep", "serve", "prepare", "enjoy", "create", "cook", "eat", "relax",
            "work", "read", "watch", "start", "get"}


def _verb_forms() -> dict[str, str]:
    out: dict[str, str] = {}
    for v in VERBS:
        ing = v[:-1] + "ing" if v.endswith("e") and not v.endswith("ee") else (
            v + v[-1] + "ing" if v in ("put", "set", "scrub", "get") else v + "ing")
        out.update({v: v, v + "s": v, ing: v})
    return out


_VERB_FORMS = _verb_forms()


# -- tokens ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tok:
    word: str
    start: int
    end: int


def _singulars(w: str) -> list[str]:
    out = [w]
    if w in _IRREGULAR:
        out.append(_IRREGULAR[w])
    if w.endswith("ies") and len(w) > 4:
        out.append(w[:-3] + "y")
    if w.endswith("es") and len(w) > 3:
        out += [w[:-2], w[:-1]]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 2:
        out.append(w[:-1])
    return out


def _plural(phrase: str) -> str:
    words = phrase.split()
    i = words.index("of") - 1 if "of" in words else len(words) - 1
    w = words[i]
    if w in ("shelves", "drawers"):
        return phrase
    w = w[:-1] + "ies" if w.endswith("y") and w[-2:-1] not in "aeiou" else (
        w + "es" if w.endswith(("s", "sh", "ch", "x", "z")) else w + "s")
    return " ".join(words[:i] + [w] + words[i + 1:])


_ROOM_PHRASES = sorted(((tuple(k.split("_")), k) for k in REGION_ROOMS), key=lambda x: -len(x[0]))
_FURN_PHRASES: list[tuple[tuple[str, ...], str, bool]] = sorted(
    [(tuple(k.split()), c, False) for k, c in FURNITURE_WORDS.items()]
    + [(tuple(_plural(k).split()), c, True) for k, c in FURNITURE_WORDS.items() if _plural(k) != k],
    key=lambda x: -len(x[0]))


def _names(tier: int, cls: str, forms: set[str]) -> bool:
    """Whether noun ``forms`` name class ``cls`` at matching tier 0 (exact), 1 (the class ends
    in the noun), 2 (it starts with it) or 3 (a :data:`CATEGORY_WORDS` member)."""
    if tier == 0:
        return cls in forms
    if tier == 1:
        return any(cls.endswith("_" + f) for f in forms)
    if tier == 2:
        return any(cls.startswith(f + "_") for f in forms)
    return any(cls == m or cls.endswith("_" + m) for f in forms for m in CATEGORY_WORDS.get(f, ()))


# -- the compiler ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Ref:
    """Entities a noun phrase names: object handles of one group, or furniture."""

    kind: str  # "objects" | "furniture"
    handles: tuple[str, ...]
    number: int
    group: int = -1


@dataclass
class _Loc:
    kind: str  # room | furniture | floor | faucet | things | each_other
    rooms: tuple[str, ...] = ()
    cls: str = ""
    plural: bool = False
    span: tuple[int, int] | None = None  # the furniture words (for rewriting)
    refs: list[_Ref] = field(default_factory=list)
    pronoun: bool = False


@dataclass
class _Clause:
    toks: list[_Tok]
    text: str
    sentence: int
    first: bool  # opens its sentence
    then: bool = False
    sub: str = ""  # after | before | once
    props: list[int] = field(default_factory=list)


class _ClauseError(ValueError):
    pass


@dataclass
class _Group:
    index: int
    classes: tuple[str, ...]
    handles: list[str]


class _Compiler:
    def __init__(self, template: Mapping[str, Any], world: World, rng: random.Random) -> None:
        self.t, self.world, self.rng = template, world, rng
        self.tid = template["episode_id"]
        self.text: str = template["instruction"]
        self.groups: list[_Group] = []
        self.n2r: dict[str, str] = {}
        self.classes: dict[str, str] = {}
        self.props: list[dict[str, Any]] = []
        self.deps: list[dict[str, Any]] = []
        self.terminal: list[int] = []
        self.same_arg: list[tuple[int, int]] = []
        self.explicit: dict[str, dict[str, bool]] = {}
        self.presumed: dict[str, dict[str, bool]] = {}
        self.replace: dict[tuple[int, int], str] = {}
        self.room_map: dict[str, str] = {}
        self.last_rooms: tuple[str, ...] = ()
        self.antecedents: list[list[_Ref]] = []
        self.placed: dict[int, int] = {}  # group -> latest placement proposition
        self.pending: dict[int, str] = {}  # group -> clause text of a move without destination
        self.clause: _Clause | None = None

    # -- errors
    def fail(self, reason: str) -> _ClauseError:
        text = self.clause.text if self.clause else self.text
        return _ClauseError(f"template {self.tid}: cannot read clause {text!r}: {reason}")

    # -- spawning
    def spawn(self) -> None:
        taken = set(self.world.objects) | set(self.world.furniture) | set(self.world.room_box)
        by_classes: dict[tuple[str, ...], _Group] = {}
        for entry in self.t["initial_state"]:
            classes = tuple(c.strip().lower().replace(" ", "_") for c in entry["object_classes"])
            cands: list[str] = []
            for region in entry["allowed_regions"]:
                room = region_rooms(region, self.world)[0]
                self.room_map[region] = room
                for name in entry["furniture_names"]:
                    cls = furniture_class(name)
                    hs = resolve_furniture(self.world, cls, [room])[0]  # "floor": the room's floor
                    cands += [h for h in hs if h not in cands]
            group = by_classes.get(classes)
            if group is None:
                group = by_classes[classes] = _Group(len(self.groups), classes, [])
                self.groups.append(group)
            for k in range(int(entry["number"])):
                cls = classes[k % len(classes)]
                i = 0
                while f"{cls}_{i}" in taken:
                    i += 1
                h = f"{cls}_{i}"
                taken.add(h)
                f = self.rng.choice(cands)
                self.n2r[h] = f"{f}|{'on' if self.world.furniture[f].surface else 'within'}"
                if mask_id(h) != cls:
                    self.classes[h] = cls
                group.handles.append(h)

    def furniture_states(self) -> None:
        for entry in self.t.get("initial_furniture_state", []) or []:
            rooms = sorted({r for region in entry["allowed_regions"] for r in region_rooms(region, self.world)})
            for name in entry["furniture_classes"]:
                for h in resolve_furniture(self.world, furniture_class(name), rooms)[0]:
                    for state, v in entry["object_states"].items():
                        self.explicit.setdefault(state, {})[h] = bool(v)

    # -- tokens, sentences, clauses
    def tokens(self) -> list[_Tok]:
        out: list[_Tok] = []
        for m in _TOKEN.finditer(self.text.replace("\u2019", "'")):
            w = m.group().lower()
            if w == "s" and out and out[-1].word[0].isalpha() and out[-1].end < m.start():
                prev = out.pop()
                out.append(_Tok(prev.word + "s", prev.start, m.end()))
                self.replace[(prev.start, m.end())] = self.text[prev.start:prev.end] + "s"
                continue
            out.append(_Tok(w, m.start(), m.end()))
        return out

    def verb_start(self, toks: Sequence[_Tok], j: int) -> bool:
        if j >= len(toks):
            return False
        w = toks[j].word
        if w in _SUBORDINATORS:
            return j + 1 < len(toks) and toks[j + 1].word in _VERB_FORMS
        if w == "make":
            return j + 1 < len(toks) and toks[j + 1].word == "sure"
        return w in _VERB_FORMS

    def clauses(self) -> list[_Clause]:
        toks = self.tokens()
        sentences: list[list[_Tok]] = [[]]
        for t in toks:
            if t.word in _SENTENCE_END:
                sentences.append([])
            else:
                sentences[-1].append(t)
        out: list[_Clause] = []
        for si, sent in enumerate(s for s in sentences if s):
            cuts = [0]
            i = 1
            while i < len(sent):
                j = i
                while j < len(sent) and (sent[j].word in _CONNECTIVES or (
                        sent[j].word == "after" and j + 1 < len(sent) and sent[j + 1].word in ("that", "this"))):
                    j += 2 if sent[j].word == "after" else 1
                if j > i and self.verb_start(sent, j):
                    cuts.append(i)
                    i = j
                elif sent[i].word in _SUBORDINATORS and self.verb_start(sent, i):
                    cuts.append(i)
                    i += 1
                else:
                    i += 1
            cuts.append(len(sent))
            for a, b in zip(cuts, cuts[1:]):
                part = sent[a:b]
                c = _Clause([], "", si, a == 0)
                k = 0
                while k < len(part) and (part[k].word in _LEADING or (part[k].word == "let" and k + 1 < len(part)
                                                                       and part[k + 1].word == "us")):
                    if part[k].word in _TEMPORAL:
                        c.then = True
                    k += 2 if part[k].word == "let" else 1
                if k + 1 < len(part) and part[k].word == "after" and part[k + 1].word in ("that", "this"):
                    c.then, k = True, k + 2
                    while k < len(part) and part[k].word == ",":
                        k += 1
                if k >= len(part):
                    continue
                c.text = self.text[part[k].start:part[-1].end]
                if part[k].word in _SUBORDINATORS:
                    c.sub, k = part[k].word, k + 1
                c.toks = list(part[k:])
                out.append(c)
        return out

    # -- phrases
    def split_pps(self, toks: list[_Tok]) -> tuple[list[_Tok], list[tuple[str, list[_Tok]]]]:
        head: list[_Tok] = []
        pps: list[tuple[str, list[_Tok]]] = []
        i = 0
        while i < len(toks):
            for prep in PREPOSITIONS:
                if tuple(t.word for t in toks[i:i + len(prep)]) == prep:
                    pps.append((" ".join(prep), []))
                    i += len(prep)
                    break
            else:
                (pps[-1][1] if pps else head).append(toks[i])
                i += 1
        out = []
        for prep, np in pps:  # "to make a salad", "for meditation": purposes
            if prep == "for" or (prep == "to" and np and (np[0].word in _VERB_FORMS or np[0].word in _PURPOSE)):
                if prep == "to":
                    break
                continue
            out.append((prep, np))
        return head, out

    def match_room(self, words: Sequence[str], i: int) -> tuple[str, int] | None:
        for phrase, key in _ROOM_PHRASES:
            if tuple(words[i:i + len(phrase)]) == phrase:
                n = len(phrase)
                if i + n < len(words) and words[i + n] == "room" and key not in ("living_room", "dining_room"):
                    n += 1
                return key, n
        return None

    def match_furniture(self, words: Sequence[str], i: int) -> tuple[str, bool, int] | None:
        for phrase, cls, plural in _FURN_PHRASES:
            if tuple(words[i:i + len(phrase)]) == phrase:
                return cls, plural, len(phrase)
        return None

    def mention_room(self, key: str, toks: Sequence[_Tok]) -> tuple[str, ...]:
        rooms = tuple(region_rooms(key, self.world))
        mapped = mask_id(rooms[0])
        if mapped != key:
            text = mapped.replace("_", " ")
            orig = self.text[toks[0].start:toks[-1].end]
            self.replace[(toks[0].start, toks[-1].end)] = text[0].upper() + text[1:] if orig[:1].isupper() else text
        self.last_rooms = rooms
        return rooms

    def strip_det(self, toks: list[_Tok]) -> list[_Tok]:
        while toks and toks[0].word in _DETERMINERS | _ALL | {"of", "a", "an"}:
            toks = toks[1:]
        return toks

    def location(self, toks: list[_Tok], things_ok: bool = False) -> _Loc | None:
        """A room, furniture (maybe room-qualified), the floor, a faucet, or (``things_ok``) objects."""
        body = self.strip_det(list(toks))
        words = [t.word for t in body]
        if not words:
            return None
        if words in (["each", "other"], ["one", "another"]) or words == ["other"]:
            return _Loc("each_other")
        if words in (["floor"], ["ground"]):
            return _Loc("floor")
        room = self.match_room(words, 0)
        furn = self.match_furniture(words, 0)
        if furn and (room is None or furn[2] >= room[1]):
            room = None
        start = room[1] if room else 0
        rooms: tuple[str, ...] = self.mention_room(room[0], body[:start]) if room else ()
        furn = self.match_furniture(words, start)
        if furn and start + furn[2] == len(words):
            cls, plural, n = furn
            if cls == "faucet":
                return _Loc("faucet")
            return _Loc("furniture", rooms, cls, plural, (body[start].start, body[start + n - 1].end))
        if room and start == len(words):
            return _Loc("room", rooms)
        if things_ok:
            refs = self.things(list(toks), allow_furniture=False, quiet=True)
            if refs:
                return _Loc("things", refs=refs, pronoun=bool(words and words[0] in _PRONOUNS))
        return None

    def match_groups(self, words: Sequence[str]) -> list[tuple[_Group, list[str]]]:
        for s in range(len(words)):
            if any(w not in ADJECTIVES for w in words[:s]):
                break
            phrase = list(words[s:])
            forms = {"_".join(phrase[:-1] + [w]) for w in _singulars(phrase[-1])}
            for tier in range(4):
                found = []
                for g in self.groups:
                    hs = [h for h in g.handles if _names(tier, self.classes.get(h, mask_id(h)), forms)]
                    if hs:
                        found.append((g, hs))
                if found:
                    return found
        return []

    def things(self, toks: list[_Tok], allow_furniture: bool, quiet: bool = False,
               qualifier: tuple[str, ...] = (), used: list[bool] | None = None) -> list[_Ref]:
        """The entities of a noun phrase list ("the kettle and the jug", "them", "the lounge counter");
        ``qualifier``: rooms of a following "in the <room>" for furniture named without a room
        (``used`` gets True when one took them)."""
        parts: list[list[_Tok]] = [[]]
        for t in toks:
            if t.word in ("and", ","):
                parts.append([])
            else:
                parts[-1].append(t)
        refs: list[_Ref] = []
        for part in (p for p in parts if p):
            words = [t.word for t in part]
            count: int | None = None
            i = 0
            while i < len(words) and (words[i] in _DETERMINERS | _ALL | {"of"} or words[i] in _CARDINALS
                                      or words[i].isdigit()):
                if words[i] in _CARDINALS or words[i].isdigit():
                    count = _CARDINALS.get(words[i]) or int(words[i])
                i += 1
            rest = words[i:]
            if not rest or (rest[0] in _PRONOUNS and all(w in _ALL for w in rest[1:])):
                refs += [self.recount(r, count) for r in self.antecedent(exclude=())]
                continue
            found = self.match_groups(rest) if rest else []
            if found:
                for g, hs in found:
                    n = len(hs) if count is None else count
                    if n > len(hs):
                        raise self.fail(f"{' '.join(part_w for part_w in words)!r} asks for {n} but the template "
                                        f"has {len(hs)}")
                    refs.append(_Ref("objects", tuple(hs), n, g.index))
                continue
            if allow_furniture:
                loc = self.location(part)
                if loc is not None and loc.kind == "furniture":
                    if not loc.rooms and qualifier:
                        loc.rooms = qualifier
                        if used is not None:
                            used.append(True)
                    hs = self.furniture(loc)
                    refs.append(_Ref("furniture", tuple(hs), len(hs) if loc.plural else 1))
                    continue
            if quiet:
                return []
            raise self.fail(f"{' '.join(words)!r} names no object of the template"
                            + (" and no furniture" if allow_furniture else ""))
        return refs

    def recount(self, r: _Ref, count: int | None) -> _Ref:
        if count is None:
            return r
        if count > len(r.handles):
            raise self.fail(f"asks for {count} of {len(r.handles)}")
        return _Ref(r.kind, r.handles, count, r.group)

    def antecedent(self, exclude: Sequence[_Ref]) -> list[_Ref]:
        for refs in reversed(self.antecedents):
            if list(refs) != list(exclude):
                return list(refs)
        raise self.fail("a pronoun with nothing before it to refer to")

    def furniture(self, loc: _Loc) -> list[str]:
        """Resolve a furniture phrase (see :func:`.house_map.resolve_furniture`); rewrite a fallback's words."""
        cls = loc.cls
        if loc.rooms:
            hs, used = resolve_furniture(self.world, cls, loc.rooms)
        elif self.last_rooms and furniture_of_class(self.world, cls, self.last_rooms):
            hs, used = furniture_of_class(self.world, cls, self.last_rooms), cls
        elif furniture_of_class(self.world, cls, None):
            hs, used = furniture_of_class(self.world, cls, None), cls
        else:
            hs, used = resolve_furniture(self.world, cls, self.last_rooms or None)
        if used != cls and loc.span is not None:
            text = used.replace("_", " ")
            text = _plural(text) if loc.plural else text
            orig = self.text[loc.span[0]:loc.span[1]]
            self.replace[loc.span] = text[0].upper() + text[1:] if orig[:1].isupper() else text
        return hs

    # -- propositions
    def emit(self, fn: str, **args: Any) -> int:
        self.props.append({"function_name": fn, "args": args})
        i = len(self.props) - 1
        assert self.clause is not None
        self.clause.props.append(i)
        return i

    def presume(self, state: str, handles: Iterable[str], value: bool) -> None:
        for h in handles:
            self.presumed.setdefault(state, {})[h] = value

    def place(self, refs: list[_Ref], dest: _Loc, prep: str) -> None:
        for r in refs:
            if r.kind != "objects":
                raise self.fail("furniture cannot be moved")
        if dest.kind == "room":
            for r in refs:
                self.placed[r.group] = self.emit("is_in_room", object_handles=list(r.handles),
                                                 room_ids=list(dest.rooms), number=r.number)
        elif dest.kind in ("furniture", "faucet"):
            hs = self.furniture(dest) if dest.kind == "furniture" else furniture_of_class(
                self.world, "sink", self.last_rooms or None) or furniture_of_class(self.world, "sink", None)
            fs = [self.world.furniture[h] for h in hs]
            inside = (prep in ("in", "into", "inside", "within") and all(f.container for f in fs)) or not all(
                f.surface for f in fs)
            if inside and not all(f.container for f in fs):
                raise self.fail(f"{', '.join(hs)} is neither a surface nor a container for all candidates")
            for r in refs:
                self.placed[r.group] = self.emit("is_inside" if inside else "is_on_top", object_handles=list(r.handles),
                                                 receptacle_handles=list(hs), number=r.number)
        elif dest.kind == "floor":
            for r in refs:
                self.placed[r.group] = self.emit("is_on_floor", object_handles=list(r.handles), number=r.number)
        elif dest.kind == "things":
            others = [o for o in dest.refs]
            b = [h for o in others for h in o.handles]
            for r in refs:
                if set(r.handles) & set(b):
                    raise self.fail("an object cannot be next to itself")
                i = self.emit("is_next_to", entity_handles_a=list(r.handles), entity_handles_b=b, number=r.number)
                self.depend(i, [r, *others])
        elif dest.kind == "each_other":
            if len(refs) == 2 and all(r.number == 1 for r in refs):
                i = self.emit("is_next_to", entity_handles_a=list(refs[0].handles),
                              entity_handles_b=list(refs[1].handles), number=1)
            elif sum(r.number for r in refs) >= 2:
                i = self.emit("is_clustered", **{"*args": [list(r.handles) for r in refs]},
                              number=[r.number for r in refs])
            else:
                raise self.fail("'each other' needs at least two objects")
            self.depend(i, refs)
        for r in refs:
            self.pending.pop(r.group, None)

    def depend(self, i: int, refs: Sequence[_Ref]) -> None:
        on = sorted({self.placed[r.group] for r in refs if r.kind == "objects" and r.group in self.placed})
        if on:
            self.deps.append({"proposition_indices": [i], "depends_on": on, "relation_type": "while_satisfied",
                              "dependency_mode": "all"})

    def state(self, refs: list[_Ref], goal: str) -> list[int]:
        fn, state, start = _STATE_GOALS[goal]
        out = []
        for r in refs:
            if r.kind == "furniture" and state != "is_clean":
                raise self.fail(f"furniture ({', '.join(r.handles)}) has no state {state}")
            if r.kind == "objects":
                lacking = sorted({c for h in r.handles if state not in affordances(c := self.classes.get(
                    h, mask_id(h)))})
                if lacking:
                    raise self.fail(f"{', '.join(lacking)} cannot take the state {state}")
            self.presume(state, r.handles, start)
            out.append(self.emit(fn, object_handles=list(r.handles), number=r.number))
        return out

    # -- clauses
    def run_clause(self, c: _Clause) -> None:
        self.clause = c
        toks = c.toks
        if not toks or toks[0].word not in _VERB_FORMS:
            raise self.fail("it does not start with a verb I know (" + ", ".join(sorted(VERBS)) + ")")
        verb = _VERB_FORMS[toks[0].word]
        kind = VERBS[verb]
        rest = toks[1:]
        if verb in _FRAMING and rest and rest[0].word == "up":
            head, _ = self.split_pps(rest[1:])
            loc = self.location(head)
            if (loc is not None and loc.kind == "room") or (head and head[0].word in ("a", "an")):
                return
            if verb != "clean":
                raise self.fail(f"'{verb} up' frames a room or 'a ...', not {self.text[head[0].start:head[-1].end]!r}"
                                if head else f"'{verb} up' with nothing after it")
            rest = rest[1:]
        if kind == "assert":
            self.run_assert(verb, rest)
            return
        goal = {"clean": "clean", "fill": "fill", "empty": "empty"}.get(kind, "")
        if kind == "power":
            words = [t.word for t in rest]
            if words and words[0] in ("on", "off"):
                goal, rest = words[0], rest[1:]
            elif words and words[-1] in ("on", "off"):
                goal, rest = words[-1], rest[:-1]
            elif "on" in words or "off" in words:
                k = min(words.index(w) for w in ("on", "off") if w in words)
                goal, rest = words[k], rest[:k] + rest[k + 1:]
            else:
                raise self.fail(f"'{verb}' needs 'on' or 'off'")
        elif kind != "move":
            while rest and rest[0].word in _RESULTS[kind]:
                rest = rest[1:]
        head, pps = self.split_pps(rest)
        while head and head[-1].word in _RESULTS[kind]:
            head = head[:-1]
        if not head:
            raise self.fail(f"'{verb}' without an object")
        bare = self.strip_det(list(head))
        pronoun = not bare or bare[0].word in _PRONOUNS
        pps = [(p, np) for p, np in pps if np or p != "off"]  # "wipe it off": a particle
        qualifier: tuple[str, ...] = ()
        if kind != "move" and pps and pps[0][0] in ("in", "at"):
            first = self.location(pps[0][1])
            qualifier = first.rooms if first is not None and first.kind == "room" else ()
        used: list[bool] = []
        refs = self.things(head, allow_furniture=kind != "move", qualifier=qualifier, used=used)
        if used:
            pps = pps[1:]
        # a room right after furniture qualifies it ("the bench in the garage")
        locs: list[tuple[str, _Loc]] = []
        for prep, np in pps:
            if prep in _INSTRUMENT and kind != "move":
                continue
            loc = self.location(np, things_ok=prep in _NEXT)
            if loc is None:
                raise self.fail(f"cannot read the place {self.text[np[0].start:np[-1].end] if np else prep!r}")
            if (loc.kind == "room" and prep in ("in", "at") and locs and locs[-1][1].kind == "furniture"
                    and not locs[-1][1].rooms):
                locs[-1][1].rooms = loc.rooms
                continue
            locs.append((prep, loc))
        if kind == "move":
            strong = [(p, l) for p, l in locs if p in _STRONG]
            dests = [(p, l) for p, l in locs if p in _STRONG | _NEXT] if strong else \
                [(p, l) for p, l in locs if p in _WEAK | _NEXT]
            self.antecedents.append(refs)
            self.go(refs, dests, c)
            return
        self.antecedents.append(refs)
        dests = [(p, l) for p, l in locs if pronoun and p not in _SOURCE and l.kind != "faucet"
                 and not (l.kind == "furniture" and l.cls in ("sink", "bathtub"))]
        if dests:
            self.go(refs, dests, c)
        self.state(refs, goal)

    def go(self, refs: list[_Ref], dests: list[tuple[str, _Loc]], c: _Clause) -> None:
        rooms = [l for _, l in dests if l.kind == "room"]
        furn = [l for _, l in dests if l.kind == "furniture"]
        if rooms and furn:  # "in the kitchen on the table": the table of that room
            for l in furn:
                l.rooms = l.rooms or rooms[0].rooms
            dests = [(p, l) for p, l in dests if l.kind != "room"]
        if not dests:
            for r in refs:
                if r.kind == "objects":
                    self.pending.setdefault(r.group, c.text)
            return
        # placements first, so that "next to" can depend on them
        for prep, loc in sorted(dests, key=lambda d: d[1].kind in ("things", "each_other")):
            if loc.kind == "things" and loc.pronoun:
                loc.refs = self.antecedent(exclude=refs)
            self.place(refs, loc, prep)

    def run_assert(self, verb: str, rest: list[_Tok]) -> None:
        if verb == "make":
            if not rest or rest[0].word != "sure":
                raise self.fail("'make' is read only as 'make sure'")
            rest = rest[1:]
        if rest and rest[0].word == "that":
            rest = rest[1:]
        words = [t.word for t in rest]
        cop = next((i for i, w in enumerate(words) if w in ("is", "are", "stays", "stay", "remains", "remain")), -1)
        if cop <= 0:
            raise self.fail("'make sure' needs '<things> is|are <state or place>'")
        refs = self.things(rest[:cop], allow_furniture=True)
        self.antecedents.append(refs)
        pred = rest[cop + 1:]
        while pred and pred[0].word in ("turned", "powered", "switched", "still", "all"):
            pred = pred[1:]
        before = len(self.props)
        if len(pred) == 1 and pred[0].word in _ASSERT_WORDS:
            self.state(refs, _ASSERT_WORDS[pred[0].word])
        else:
            _, pps = self.split_pps(pred)
            if not pps or self.split_pps(pred)[0]:
                raise self.fail(f"cannot read the goal {self.text[pred[0].start:pred[-1].end] if pred else ''!r}")
            dests = []
            for prep, np in pps:
                loc = self.location(np, things_ok=prep in _NEXT)
                if loc is None:
                    raise self.fail(f"cannot read the place {self.text[np[0].start:np[-1].end] if np else prep!r}")
                if loc.kind == "room" and dests and dests[-1][1].kind == "furniture" and not dests[-1][1].rooms:
                    dests[-1][1].rooms = loc.rooms
                    continue
                dests.append((prep, loc))
            self.go(refs, dests, self.clause)  # type: ignore[arg-type]
        self.terminal += list(range(before, len(self.props)))

    # -- the whole instruction
    def compile(self) -> dict[str, Any]:
        self.spawn()
        self.furniture_states()
        try:
            clauses = self.clauses()
            for c in clauses:
                self.run_clause(c)
        except _ClauseError:
            raise
        except ValueError as e:
            raise self.fail(str(e)) from e
        self.clause = None
        if self.pending:
            text = next(iter(self.pending.values()))
            raise _ClauseError(f"template {self.tid}: cannot read clause {text!r}: a move without a destination "
                               "and no later clause places those objects")
        if not self.props:
            raise _ClauseError(f"template {self.tid}: cannot read instruction {self.text!r}: it asks for nothing")
        edges: list[list[int]] = []
        with_props = [c for c in clauses if c.props]
        for k, c in enumerate(with_props):
            if c.then and k > 0:
                edges += [[a, b] for a in with_props[k - 1].props for b in c.props]
            if c.sub:
                if c.first and k + 1 < len(with_props) and with_props[k + 1].sentence == c.sentence:
                    main = with_props[k + 1]
                elif k > 0 and with_props[k - 1].sentence == c.sentence:
                    main = with_props[k - 1]
                else:
                    raise _ClauseError(f"template {self.tid}: cannot read clause {c.text!r}: '{c.sub}' without "
                                       "a main clause in its sentence")
                pairs = [[a, b] for a in c.props for b in main.props]
                edges += [[b, a] for a, b in pairs] if c.sub == "before" else pairs
        edges = [e for i, e in enumerate(edges) if e not in edges[:i]]
        n = len(self.props)
        constraints: list[dict[str, Any]] = []
        if edges:
            constraints.append({"type": "TemporalConstraint", "args": {"dag_edges": edges, "n_propositions": n}})
        if self.terminal:
            constraints.append({"type": "TerminalSatisfactionConstraint",
                                "args": {"proposition_indices": sorted(set(self.terminal)), "n_propositions": n}})
        states: dict[str, dict[str, bool]] = {}
        for src in (self.presumed, self.explicit):  # the template's own states win
            for name, per in src.items():
                states.setdefault(name, {}).update(per)
        fns = {p["function_name"] for p in self.props}
        family = ("object_state" if fns - {*_PLACEMENTS, "is_next_to", "is_clustered"} else
                  "temporal" if edges else "spatial" if fns & {"is_next_to", "is_clustered"} else "rearrange")
        rooms = sorted(self.world.room_box)
        starts = self.rng.sample(rooms, 2) if len(rooms) > 1 else rooms * 2
        text = self.text
        for (a, b), new in sorted(self.replace.items(), reverse=True):
            text = text[:a] + new + text[b:]
        record: dict[str, Any] = {
            "episode_id": f"template-{self.tid}", "instruction": " ".join(text.split()),
            "scene_id": self.world.scene.name, "name_to_receptacle": dict(self.n2r),
            "object_states": {k: dict(sorted(v.items())) for k, v in sorted(states.items())},
            "evaluation_propositions": self.props, "evaluation_proposition_dependencies": self.deps,
            "evaluation_constraints": constraints, "agent_rooms": starts,
            "info": {"family": family, "template": self.tid, "template_instruction": self.text,
                     "template_scene_id": self.t.get("scene_id"), "region_rooms": dict(sorted(self.room_map.items()))},
        }
        if self.classes:
            record["object_classes"] = dict(self.classes)
        try:
            TaskEvaluation.from_episode(record)
        except ValueError as e:
            raise ValueError(f"template {self.tid}: compiled an invalid evaluation: {e}") from e
        return record


def compile_clauses(template: Mapping[str, Any], world: World, rng: random.Random) -> dict[str, Any]:
    """Compile a checked template (:func:`.templates.check_template`) in ``world`` into a task
    record (:mod:`.tasks` format): spawn its objects, set its furniture states, read its
    instruction with the grammar above and build the propositions, dependencies, constraints,
    ``agent_rooms`` and ``info`` (episode ``template-<id>``, the world's scene name). The rng
    picks spawn furniture and then the two start rooms; ValueError names the clause the grammar
    cannot read."""
    return _Compiler(template, world, rng).compile()
