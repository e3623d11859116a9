"""What our apartments are made of: task objects, look-alikes, furniture, fixtures and clutter.

Object and furniture properties follow VirtualHome's vocabulary (checked against the
VirtualHome resources and MECoBench scene graphs in the tests); the six object groups are
mecobench.txt appendix A.3. Appearance texts are our own short descriptions, used as
appearance priors. Sizes are real: per-class medians of the bounding boxes in the five
MECoBench scenes (``parallel_5.json``), VirtualHome's TestScenes where MECoBench lacks a
class (``tests/test_apartments.py`` compares them with the data).
"""

from __future__ import annotations

from dataclasses import dataclass

Size = tuple[float, float, float]


@dataclass(frozen=True)
class ObjectClass:
    name: str
    group: str  # one of the six MECoBench object categories (appendix A.3)
    category: str  # VirtualHome node category
    properties: tuple[str, ...]
    appearance: str
    large: bool = False  # large objects get at most one redundant instance (A.2)
    #: bounding-box size (x, y, z) in metres: the median over the five MECoBench scenes
    #: (parallel_5.json); boardgame and cutleryknife (lying flat) from VirtualHome's TestScenes
    size: Size = (0.2, 0.2, 0.2)


_G = ("GRABBABLE", "MOVABLE")
TASK_OBJECTS: dict[str, ObjectClass] = {o.name: o for o in [
    # hygiene items
    ObjectClass("toothbrush", "hygiene", "Props", _G + ("RECIPIENT",),
                "Slim blue plastic toothbrush with white bristles and a rubber grip.", size=(0.1, 0.24, 0.03)),
    ObjectClass("toothpaste", "hygiene", "Props", _G + ("CREAM", "POURABLE", "CAN_OPEN"),
                "White squeeze tube with a red cap and a red-and-blue stripe label.", size=(0.19, 0.03, 0.11)),
    ObjectClass("towel", "hygiene", "Props", _G + ("COVER_OBJECT",),
                "Folded fluffy cotton towel in pale teal with a woven border.", size=(0.38, 0.09, 0.13)),
    ObjectClass("barsoap", "hygiene", "Props", _G + ("CREAM",),
                "Small rounded cream-coloured soap bar with an embossed oval logo.", size=(0.15, 0.04, 0.14)),
    # office items
    ObjectClass("keyboard", "office", "Electronics", _G + ("HAS_PLUG",),
                "Black full-size computer keyboard with grey letters and a short cable.", large=True,
                size=(0.71, 0.05, 0.22)),
    ObjectClass("mouse", "office", "Electronics", _G + ("HAS_PLUG",),
                "Glossy white computer mouse with a grey scroll wheel.", size=(0.21, 0.04, 0.17)),
    ObjectClass("mug", "tableware", "Props", _G + ("RECIPIENT", "POURABLE"),
                "Tall red ceramic mug with a white inside and a curved handle.", size=(0.12, 0.1, 0.09)),
    # electronics
    ObjectClass("cellphone", "electronics", "Props", _G + ("HAS_PLUG", "HAS_SWITCH"),
                "Black rectangular smartphone with a dark glass screen and silver edges.", size=(0.13, 0.01, 0.06)),
    ObjectClass("remotecontrol", "electronics", "Electronics", _G + ("HAS_SWITCH",),
                "Grey plastic TV remote with rounded ends and black and red buttons.", size=(0.2, 0.03, 0.09)),
    # entertainment items
    ObjectClass("boardgame", "entertainment", "Props", _G + ("SURFACES",),
                "Square yellow game box with a dark grey board and coloured tokens.", large=True,
                size=(0.34, 0.01, 0.34)),
    ObjectClass("magazine", "entertainment", "Props", _G + ("READABLE", "HAS_PAPER", "COVER_OBJECT"),
                "Glossy magazine with an orange-and-blue cover and bold white title.", large=True,
                size=(0.28, 0.01, 0.21)),
    ObjectClass("toy", "entertainment", "Props", _G,
                "Wooden toy truck with a blue body, green cab and red wheels.", size=(0.25, 0.26, 0.17)),
    ObjectClass("book", "entertainment", "Props", _G + ("READABLE", "HAS_PAPER", "CUTTABLE"),
                "Purple hardcover book with a white front panel and gold page edges.", size=(0.28, 0.06, 0.22)),
    # food and drinks
    ObjectClass("cupcake", "food", "Food", _G + ("EATABLE",),
                "Pink frosted cupcake with a swirl top in a polka-dot paper wrapper.", size=(0.12, 0.13, 0.12)),
    ObjectClass("juice", "food", "Food", _G + ("DRINKABLE", "POURABLE"),
                "Square beige plastic juice bottle with a purple cap and fruit label.", size=(0.07, 0.2, 0.07)),
    ObjectClass("wine", "food", "Food", _G + ("DRINKABLE", "POURABLE"),
                "Dark green wine bottle with a cream label and a burgundy foil neck.", size=(0.12, 0.46, 0.12)),
    ObjectClass("pudding", "food", "Food", _G + ("EATABLE", "CUTTABLE"),
                "Amber caramel pudding in a fluted mould with a glossy brown top.", size=(0.13, 0.07, 0.13)),
    ObjectClass("apple", "food", "Food", _G + ("EATABLE",),
                "Shiny red apple with a short brown stem and a yellow blush.", size=(0.1, 0.11, 0.1)),
    ObjectClass("pancake", "food", "Food", _G + ("EATABLE", "CUTTABLE"),
                "Stack of golden-brown pancakes with a pat of butter on top.", size=(0.2, 0.08, 0.2)),
    ObjectClass("poundcake", "food", "Food", _G + ("EATABLE", "CUTTABLE"),
                "Rectangular loaf of yellow pound cake with a dark crust.", size=(0.27, 0.1, 0.27)),
    ObjectClass("coffeepot", "tableware", "Props", _G + ("RECIPIENT", "CAN_OPEN"),
                "Glass coffee carafe with a black plastic handle and lid.", size=(0.28, 0.13, 0.25)),
    # tableware
    ObjectClass("plate", "tableware", "Props", _G + ("RECIPIENT", "SURFACES"),
                "Round white ceramic dinner plate with a thin blue rim.", size=(0.29, 0.02, 0.29)),
    ObjectClass("waterglass", "tableware", "Props", _G + ("RECIPIENT", "POURABLE"),
                "Clear straight-sided drinking glass with a thick base.", size=(0.09, 0.12, 0.09)),
    ObjectClass("wineglass", "tableware", "Props", _G + ("RECIPIENT", "POURABLE"),
                "Clear stemmed wine glass with a round bowl and thin stem.", size=(0.09, 0.19, 0.09)),
    ObjectClass("cutleryfork", "tableware", "Props", _G,
                "Stainless steel dinner fork with four tines and a flat handle.", size=(0.26, 0.02, 0.03)),
]}

#: Look-alike distractors: grabbing one instead of the target is a wrong grab (Table 21).
LOOKALIKES: dict[str, ObjectClass] = {o.name: o for o in [
    ObjectClass("dishbowl", "tableware", "Props", _G + ("RECIPIENT",),
                "Round white ceramic bowl with a thin blue rim.", size=(0.19, 0.05, 0.19)),
    ObjectClass("milk", "food", "Food", _G + ("DRINKABLE", "POURABLE"),
                "White plastic milk bottle with a blue cap.", size=(0.12, 0.24, 0.12)),
    ObjectClass("cutleryknife", "tableware", "Props", _G,
                "Stainless steel table knife with a flat handle.", size=(0.26, 0.01, 0.02)),
    ObjectClass("notes", "office", "Props", _G + ("READABLE", "HAS_PAPER"),
                "Small notebook with a purple cover.", size=(0.22, 0.01, 0.15)),
    ObjectClass("creamybuns", "food", "Food", _G + ("EATABLE",),
                "Round cream bun with white frosting.", size=(0.14, 0.29, 0.11)),
    ObjectClass("condimentbottle", "food", "Props", _G + ("CREAM", "POURABLE"),
                "Squeeze bottle with a red cap.", size=(0.06, 0.2, 0.06)),
]}

#: Which look-alike a confused agent may grab for a target class.
CONFUSABLE: dict[str, str] = {
    "plate": "dishbowl", "juice": "milk", "wine": "milk", "cutleryfork": "cutleryknife",
    "book": "notes", "magazine": "notes", "cupcake": "creamybuns", "pudding": "creamybuns",
    "poundcake": "creamybuns", "pancake": "creamybuns", "toothpaste": "condimentbottle",
    "barsoap": "condimentbottle", "waterglass": "dishbowl", "wineglass": "dishbowl",
    "mug": "dishbowl",
}


@dataclass(frozen=True)
class Furniture:
    """A piece of furniture, an appliance or a fixture, with its real size.

    ``size`` is (long side, height, short side) in metres: the median over the five MECoBench
    scenes (``parallel_5.json``; VirtualHome's TestScenes where MECoBench has none), larger
    horizontal side first. Placed against a wall, the long side runs along it (a bed: the
    short side, its head). Exceptions are noted per entry.
    """

    name: str
    category: str
    properties: tuple[str, ...]
    opens: bool = False  # starts CLOSED when it can open
    size: Size = (1.0, 0.8, 0.6)
    states: tuple[str, ...] = ()  # further initial states (switched appliances start OFF, as in the real scenes)
    top: float | None = None  # height objects rest on (a sofa's seat); None: the top of the box
    holds: tuple[str, ...] = ()  # where clutter may go: "on" its top, "in" it
    shelves: int = 1  # levels inside a container (a bookshelf's shelves, a fridge's racks)
    short_to_wall: bool = False  # a bed stands head (short side) to the wall
    mount: float = 0.0  # bottom height: wall-mounted pieces, windows, lamps

    @property
    def initial_states(self) -> list[str]:
        return (["CLOSED"] if self.opens else []) + list(self.states)


_C = ("CAN_OPEN", "CONTAINERS")
FURNITURE: dict[str, Furniture] = {f.name: f for f in [
    # Table 4/5 furniture (legal goal targets and placements)
    Furniture("fridge", "Appliances", _C + ("HAS_PLUG", "HAS_SWITCH"), opens=True, size=(0.89, 2.13, 0.71),
              holds=("in",), shelves=4),
    Furniture("stove", "Appliances", _C + ("HAS_SWITCH", "SURFACES"), opens=True, size=(1.0, 1.08, 0.83),
              states=("OFF",), holds=("on",)),
    Furniture("dishwasher", "Appliances", _C + ("HAS_SWITCH",), opens=True, size=(0.97, 1.02, 0.79),
              states=("OFF",), holds=("in",), shelves=2),
    Furniture("microwave", "Appliances", _C + ("HAS_PLUG", "HAS_SWITCH"), opens=True, size=(0.54, 0.3, 0.4),
              states=("OFF",), holds=("in",)),
    Furniture("cabinet", "Furniture", _C + ("SURFACES",), opens=True, size=(1.18, 1.05, 0.38),
              holds=("on", "in"), shelves=2),
    Furniture("bookshelf", "Furniture", ("CONTAINERS", "SURFACES"), size=(2.11, 2.22, 0.32), holds=("in",),
              shelves=5),
    Furniture("sofa", "Furniture", ("SURFACES", "SITTABLE", "LIEABLE", "MOVABLE"), size=(2.36, 0.89, 1.06),
              top=0.45, holds=("on",)),
    # MECoBench's box is the 0.39 m counter slab (0.57-0.96 m); ours stands on the floor up to the same top
    Furniture("bathroomcounter", "Furniture", ("SURFACES",), size=(2.86, 0.96, 0.65), holds=("on",)),
    Furniture("nightstand", "Furniture", _C + ("SURFACES",), opens=True, size=(0.75, 0.48, 0.75),
              holds=("on", "in")),
    Furniture("bench", "Furniture", ("SURFACES", "SITTABLE", "LIEABLE", "MOVABLE"), size=(1.58, 0.51, 0.35),
              holds=("on",)),
    Furniture("bed", "Furniture", ("SURFACES", "SITTABLE", "LIEABLE"), size=(2.4, 0.65, 1.99), holds=("on",),
              short_to_wall=True),
    Furniture("desk", "Furniture", ("SURFACES", "MOVABLE"), size=(2.03, 0.95, 1.07), holds=("on",)),
    Furniture("tvstand", "Furniture", ("SURFACES", "MOVABLE"), size=(2.16, 0.49, 0.76), holds=("on",)),
    Furniture("kitchencounter", "Furniture", ("SURFACES",), size=(3.01, 1.05, 0.77), holds=("on",)),
    Furniture("coffeetable", "Furniture", ("SURFACES", "MOVABLE"), size=(1.28, 0.41, 1.22), holds=("on",)),
    Furniture("kitchentable", "Furniture", ("SURFACES", "MOVABLE"), size=(2.0, 0.95, 1.23), holds=("on",)),
    Furniture("chair", "Furniture", ("SURFACES", "SITTABLE", "MOVABLE"), size=(0.63, 1.05, 0.4), top=0.47),
    Furniture("toilet", "Furniture", ("SITTABLE", "CAN_OPEN"), opens=True, size=(0.8, 0.54, 0.77)),
    # the basin, set into a counter top (MECoBench's box is flat; ours is 2 cm so it takes counter space)
    Furniture("sink", "Furniture", ("RECIPIENT",), size=(0.67, 0.02, 0.38)),
    # more furniture of the real scenes
    Furniture("kitchencabinet", "Furniture", _C + ("SURFACES",), opens=True, size=(0.76, 0.7, 0.4),
              holds=("in",), mount=1.7),
    Furniture("bathroomcabinet", "Furniture", _C + ("SURFACES",), opens=True, size=(2.85, 0.76, 0.14),
              holds=("in",), mount=1.44),
    Furniture("closet", "Furniture", _C, opens=True, size=(2.0, 2.0, 0.51), holds=("in",), shelves=2),
    Furniture("washingmachine", "Appliances", ("RECIPIENT",) + _C + ("HAS_SWITCH", "HAS_PLUG"), opens=True,
              size=(0.72, 1.0, 0.66), states=("OFF",), holds=("in",)),
    Furniture("garbagecan", "Props", _C + ("MOVABLE",), opens=True, size=(0.33, 0.42, 0.33)),
    Furniture("bathtub", "Furniture", ("SITTABLE", "LIEABLE"), size=(1.74, 0.82, 0.97)),
    Furniture("stall", "Furniture", (), size=(1.56, 2.5, 1.56)),
    Furniture("toaster", "Appliances", ("HAS_SWITCH", "CONTAINERS", "HAS_PLUG", "MOVABLE"), size=(0.31, 0.22, 0.28),
              states=("OFF",), holds=("in",)),
    # TestScene median (MECoBench's 0.1 m depth is a flattened box)
    Furniture("coffeemaker", "Appliances", ("RECIPIENT",) + _C + ("HAS_SWITCH", "HAS_PLUG", "MOVABLE"),
              size=(0.36, 0.36, 0.27), states=("OFF",)),
    Furniture("tv", "Electronics", ("HAS_SWITCH", "LOOKABLE", "HAS_PLUG"), size=(1.44, 1.07, 0.31), states=("OFF",)),
    Furniture("cpuscreen", "Electronics", (), size=(0.93, 0.68, 0.29)),
    Furniture("mousemat", "Electronics", ("SURFACES", "MOVABLE"), size=(0.44, 0.01, 0.43)),
    Furniture("tablelamp", "Lamps", ("HAS_SWITCH", "HAS_PLUG"), size=(0.35, 0.58, 0.34), states=("ON",)),
    Furniture("stovefan", "Appliances", (), size=(0.92, 0.45, 0.62), mount=1.87),
    Furniture("faucet", "Furniture", ("HAS_SWITCH",), size=(0.1, 0.1, 0.1), states=("OFF",)),
    Furniture("oventray", "Appliances", ("SURFACES", "GRABBABLE", "MOVABLE"), size=(0.93, 0.02, 0.62)),
    Furniture("fryingpan", "Props", ("SURFACES", "GRABBABLE", "RECIPIENT", "CONTAINERS", "MOVABLE"),
              size=(0.61, 0.07, 0.6)),
    Furniture("towelrack", "Furniture", ("SURFACES", "GRABBABLE", "MOVABLE"), size=(0.5, 0.02, 0.09), mount=1.23),
]}

#: Structure and fixtures of the real scenes (walls, floors, doors, windows, lamps, wall decor).
FIXTURES: dict[str, Furniture] = {f.name: f for f in [
    Furniture("floor", "Floor", ("SURFACES",), size=(2.5, 0.0, 2.5)),
    Furniture("ceiling", "Ceiling", (), size=(2.5, 0.0, 2.5), mount=2.5),
    Furniture("wall", "Walls", (), size=(2.5, 2.5, 0.06)),
    Furniture("door", "Doors", ("CAN_OPEN",), size=(0.93, 1.0, 0.93), states=("OPEN",)),
    Furniture("doorjamb", "Doors", (), size=(0.93, 2.06, 0.12)),
    Furniture("window", "Windows", ("CAN_OPEN",), opens=True, size=(2.11, 1.02, 0.11), mount=0.99),
    Furniture("curtains", "Decor", ("CAN_OPEN", "COVER_OBJECT", "MOVABLE"), opens=True, size=(0.59, 1.15, 0.09),
              mount=0.9),
    Furniture("ceilinglamp", "Lamps", (), size=(0.53, 0.52, 0.53), mount=1.98),
    Furniture("walllamp", "Lamps", (), size=(0.22, 0.51, 0.1), mount=1.23),
    Furniture("lightswitch", "Electronics", ("HAS_SWITCH", "HAS_PLUG"), size=(0.07, 0.09, 0.01), states=("ON",),
              mount=1.21),
    Furniture("powersocket", "Electronics", (), size=(0.09, 0.15, 0.02), mount=0.07),
    Furniture("wallpictureframe", "Decor", ("GRABBABLE", "HANGABLE", "HAS_PAPER", "MOVABLE"),
              size=(0.96, 1.11, 0.04), mount=1.05),
    Furniture("rug", "Decor", ("SURFACES", "GRABBABLE", "SITTABLE", "LIEABLE", "MOVABLE"), size=(2.51, 0.01, 1.7)),
]}


@dataclass(frozen=True)
class Clutter:
    """An everyday object the apartments are filled with (never a task object or look-alike).

    Class names, categories, properties, initial states and sizes are those of the MECoBench
    scenes (``parallel_5.json``; VirtualHome's TestScenes and ``properties_data_all.json`` for
    the classes MECoBench lacks); ``size`` is (long side, height, short side). ``hosts`` are the
    furniture classes it is found on or in, after the real scenes' ON/INSIDE relations.
    """

    name: str
    category: str
    properties: tuple[str, ...]
    size: Size
    hosts: tuple[str, ...]
    states: tuple[str, ...] = ()


_GM = ("GRABBABLE", "MOVABLE")
_EAT = ("GRABBABLE", "EATABLE", "CUTTABLE", "MOVABLE")
_PRODUCE = ("kitchencounter", "kitchentable", "fridge", "coffeetable")
_FRIDGE = ("fridge", "kitchencounter", "microwave")
_PANTRY = ("kitchencabinet", "kitchencounter", "bookshelf", "cabinet", "coffeetable")
_TABLE = ("kitchentable", "kitchencounter", "coffeetable", "fridge")
_BATH = ("bathroomcounter", "bathroomcabinet", "cabinet", "bookshelf")
_SHELF = ("bookshelf", "cabinet", "desk", "nightstand", "tvstand", "bench")
_DECOR = ("tvstand", "nightstand", "coffeetable", "desk", "cabinet", "bookshelf")
CLUTTER: dict[str, Clutter] = {c.name: c for c in [
    # food and drinks (none of the template's food classes)
    Clutter("banana", "Food", _GM, (0.26, 0.1, 0.1), _PRODUCE),
    Clutter("bellpepper", "Food", _GM, (0.2, 0.18, 0.16), _PRODUCE),
    Clutter("carrot", "Food", ("GRABBABLE", "EATABLE", "CUTTABLE", "MOVABLE"), (0.29, 0.08, 0.1), _PRODUCE),
    Clutter("lime", "Food", _GM, (0.09, 0.09, 0.07), _PRODUCE),
    Clutter("peach", "Food", _GM, (0.09, 0.09, 0.07), _PRODUCE),
    Clutter("pear", "Food", _GM, (0.16, 0.1, 0.12), _PRODUCE),
    Clutter("plum", "Food", _GM, (0.09, 0.07, 0.07), _PRODUCE),
    Clutter("chicken", "Food", _GM, (0.25, 0.1, 0.15), _FRIDGE),
    Clutter("cutlets", "Food", _GM, (0.36, 0.06, 0.34), _FRIDGE),
    Clutter("salmon", "Food", _GM, (0.29, 0.05, 0.24), _FRIDGE),
    Clutter("mincedmeat", "Food", _GM, (0.27, 0.05, 0.21), _FRIDGE),
    Clutter("cereal", "Food", ("GRABBABLE", "EATABLE", "MOVABLE"), (0.24, 0.29, 0.12), _PANTRY),
    Clutter("chips", "Food", _GM, (0.18, 0.24, 0.17), _PANTRY),
    Clutter("crackers", "Food", _GM, (0.26, 0.06, 0.17), _PANTRY),
    Clutter("candybar", "Food", ("GRABBABLE", "EATABLE", "MOVABLE"), (0.2, 0.03, 0.15), _PANTRY),
    Clutter("chocolatesyrup", "Food", _EAT, (0.13, 0.2, 0.12), _PANTRY),
    Clutter("alcohol", "Food", ("GRABBABLE", "DRINKABLE", "POURABLE", "MOVABLE"), (0.11, 0.28, 0.11),
            ("bookshelf", "coffeetable", "cabinet", "kitchencabinet")),
    Clutter("pie", "Food", _EAT, (0.29, 0.04, 0.29), _TABLE),
    Clutter("sundae", "Food", _EAT, (0.12, 0.25, 0.09), _TABLE + ("desk",)),
    Clutter("whippedcream", "Food", _EAT, (0.09, 0.23, 0.08), _TABLE),
    Clutter("salad", "Food", _EAT, (0.32, 0.05, 0.31), _TABLE),
    Clutter("chinesefood", "Props", _EAT, (0.18, 0.16, 0.17), _TABLE),
    Clutter("breadslice", "Food", _EAT, (0.21, 0.04, 0.05), ("toaster", "kitchencounter")),
    # kitchen things
    Clutter("dishwashingliquid", "Props", ("GRABBABLE", "POURABLE", "MOVABLE", "CREAM"), (0.14, 0.3, 0.1),
            ("kitchencounter",)),
    Clutter("washingsponge", "Props", _GM, (0.21, 0.05, 0.16), ("kitchencounter", "bathroomcounter")),
    Clutter("cookingpot", "Props", ("GRABBABLE", "RECIPIENT", "CAN_OPEN", "MOVABLE"), (0.44, 0.09, 0.41),
            ("stove", "kitchencounter", "kitchencabinet"), ("CLOSED",)),
    Clutter("cuttingboard", "Props", ("SURFACES", "GRABBABLE", "MOVABLE"), (0.46, 0.01, 0.38), ("kitchencounter",)),
    Clutter("condimentshaker", "Props", ("GRABBABLE", "EATABLE", "POURABLE", "MOVABLE"), (0.06, 0.1, 0.05),
            ("kitchentable", "kitchencounter", "kitchencabinet")),
    # bathroom things
    Clutter("hairproduct", "Props", ("GRABBABLE", "POURABLE", "CAN_OPEN", "MOVABLE"), (0.1, 0.18, 0.1), _BATH,
            ("CLOSED",)),
    Clutter("lotionbottle", "Props", ("GRABBABLE", "POURABLE", "CAN_OPEN", "MOVABLE"), (0.06, 0.18, 0.06), _BATH,
            ("CLOSED",)),
    Clutter("toiletpaper", "Props", ("GRABBABLE", "HANGABLE", "CUTTABLE", "COVER_OBJECT", "HAS_PAPER", "MOVABLE"),
            (0.22, 0.18, 0.16), _BATH + ("washingmachine",)),
    # living, office and bedroom things
    Clutter("paper", "Props", ("GRABBABLE", "READABLE", "HAS_PAPER", "MOVABLE"), (0.27, 0.01, 0.2),
            ("desk", "bookshelf", "cabinet", "kitchencounter", "nightstand")),
    Clutter("folder", "Props", ("GRABBABLE", "CAN_OPEN", "READABLE", "CONTAINERS", "HAS_PAPER", "MOVABLE"),
            (0.28, 0.32, 0.07), ("bookshelf", "desk", "cabinet"), ("CLOSED",)),
    Clutter("crayons", "Props", _GM, (0.11, 0.02, 0.1), _SHELF),
    Clutter("glasses", "Props", ("GRABBABLE", "CLOTHES", "MOVABLE"), (0.12, 0.04, 0.12), _SHELF),
    Clutter("sportsball", "Props", _GM, (0.09, 0.1, 0.09), _SHELF + ("closet",)),
    Clutter("teddybear", "Props", _GM, (0.35, 0.42, 0.34), ("bed", "bookshelf", "bench", "sofa")),
    Clutter("globe", "Decor", _GM, (0.28, 0.43, 0.25), ("cabinet", "desk", "bookshelf", "tvstand")),
    Clutter("box", "Props", ("GRABBABLE", "RECIPIENT", "CAN_OPEN", "CONTAINERS", "COVER_OBJECT", "MOVABLE"),
            (0.4, 0.16, 0.28), ("bookshelf", "cabinet", "closet"), ("CLOSED",)),
    Clutter("radio", "Electronics", ("SURFACES", "GRABBABLE", "CAN_OPEN", "HAS_SWITCH", "HAS_PLUG", "MOVABLE"),
            (0.31, 0.19, 0.18), ("bookshelf", "nightstand", "desk", "tvstand", "cabinet"), ("OFF",)),
    Clutter("clock", "Electronics", ("GRABBABLE", "HAS_SWITCH", "LOOKABLE", "HAS_PLUG", "MOVABLE"),
            (0.25, 0.25, 0.04), ("nightstand", "bookshelf", "desk", "tvstand"), ("OFF",)),
    Clutter("candle", "Decor", ("GRABBABLE", "HAS_SWITCH", "MOVABLE"), (0.08, 0.14, 0.08),
            _DECOR + ("bathroomcounter",), ("OFF",)),
    Clutter("slippers", "Props", ("GRABBABLE", "HANGABLE", "CLOTHES", "MOVABLE"), (0.37, 0.07, 0.32),
            ("bookshelf", "closet", "bench")),
    Clutter("clothespile", "Furniture", ("GRABBABLE", "CAN_OPEN", "CONTAINERS", "MOVABLE"), (0.33, 0.1, 0.24),
            ("closet", "bookshelf", "washingmachine", "bed"), ("CLOSED",)),
    Clutter("clothespants", "Furniture", ("GRABBABLE", "HANGABLE", "CLOTHES", "MOVABLE"), (0.28, 0.61, 0.06),
            ("closet",)),
    Clutter("clothesshirt", "Furniture", ("GRABBABLE", "HANGABLE", "CLOTHES", "MOVABLE"), (0.48, 0.66, 0.12),
            ("closet",)),
    Clutter("hanger", "Furniture", ("GRABBABLE", "HANGABLE", "MOVABLE"), (0.47, 0.24, 0.04), ("closet",)),
    Clutter("pillow", "Decor", _GM, (0.87, 0.2, 0.77), ("sofa", "bed", "bench")),
    # decoration the real scenes do not make grabbable
    Clutter("orchid", "Decor", (), (0.33, 0.19, 0.33), _DECOR),
    Clutter("photoframe", "Props", (), (0.17, 0.21, 0.14), _DECOR + ("bathroomcounter",)),
    Clutter("vase", "Decor", (), (0.25, 0.77, 0.25), ("coffeetable", "bookshelf", "tvstand")),
]}


def object_class(name: str) -> ObjectClass:
    """Catalogue entry of a task object or look-alike (error names the allowed classes)."""
    if name in TASK_OBJECTS:
        return TASK_OBJECTS[name]
    if name in LOOKALIKES:
        return LOOKALIKES[name]
    raise ValueError(f"object class: {name!r} is unknown; allowed: {', '.join(sorted(TASK_OBJECTS))}")
