"""What our apartments are made of: task objects, furniture and look-alikes.

Object and furniture properties follow VirtualHome's vocabulary (checked against the
VirtualHome resources and MECoBench scene graphs in the tests); the six object groups are
mecobench.txt appendix A.3. Appearance texts are our own short descriptions, used as
appearance priors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ObjectClass:
    name: str
    group: str  # one of the six MECoBench object categories (appendix A.3)
    category: str  # VirtualHome node category
    properties: tuple[str, ...]
    appearance: str
    large: bool = False  # large objects get at most one redundant instance (A.2)


_G = ("GRABBABLE", "MOVABLE")
TASK_OBJECTS: dict[str, ObjectClass] = {o.name: o for o in [
    # hygiene items
    ObjectClass("toothbrush", "hygiene", "Props", _G + ("RECIPIENT",),
                "Slim blue plastic toothbrush with white bristles and a rubber grip."),
    ObjectClass("toothpaste", "hygiene", "Props", _G + ("CREAM", "POURABLE", "CAN_OPEN"),
                "White squeeze tube with a red cap and a red-and-blue stripe label."),
    ObjectClass("towel", "hygiene", "Props", _G + ("COVER_OBJECT",),
                "Folded fluffy cotton towel in pale teal with a woven border."),
    ObjectClass("barsoap", "hygiene", "Props", _G + ("CREAM",),
                "Small rounded cream-coloured soap bar with an embossed oval logo."),
    # office items
    ObjectClass("keyboard", "office", "Electronics", _G + ("HAS_PLUG",),
                "Black full-size computer keyboard with grey letters and a short cable.", large=True),
    ObjectClass("mouse", "office", "Electronics", _G + ("HAS_PLUG",),
                "Glossy white computer mouse with a grey scroll wheel."),
    ObjectClass("mug", "tableware", "Props", _G + ("RECIPIENT", "POURABLE"),
                "Tall red ceramic mug with a white inside and a curved handle."),
    # electronics
    ObjectClass("cellphone", "electronics", "Props", _G + ("HAS_PLUG", "HAS_SWITCH"),
                "Black rectangular smartphone with a dark glass screen and silver edges."),
    ObjectClass("remotecontrol", "electronics", "Electronics", _G + ("HAS_SWITCH",),
                "Grey plastic TV remote with rounded ends and black and red buttons."),
    # entertainment items
    ObjectClass("boardgame", "entertainment", "Props", _G + ("SURFACES",),
                "Square yellow game box with a dark grey board and coloured tokens.", large=True),
    ObjectClass("magazine", "entertainment", "Props", _G + ("READABLE", "HAS_PAPER", "COVER_OBJECT"),
                "Glossy magazine with an orange-and-blue cover and bold white title.", large=True),
    ObjectClass("toy", "entertainment", "Props", _G,
                "Wooden toy truck with a blue body, green cab and red wheels."),
    ObjectClass("book", "entertainment", "Props", _G + ("READABLE", "HAS_PAPER", "CUTTABLE"),
                "Purple hardcover book with a white front panel and gold page edges."),
    # food and drinks
    ObjectClass("cupcake", "food", "Food", _G + ("EATABLE",),
                "Pink frosted cupcake with a swirl top in a polka-dot paper wrapper."),
    ObjectClass("juice", "food", "Food", _G + ("DRINKABLE", "POURABLE"),
                "Square beige plastic juice bottle with a purple cap and fruit label."),
    ObjectClass("wine", "food", "Food", _G + ("DRINKABLE", "POURABLE"),
                "Dark green wine bottle with a cream label and a burgundy foil neck."),
    ObjectClass("pudding", "food", "Food", _G + ("EATABLE", "CUTTABLE"),
                "Amber caramel pudding in a fluted mould with a glossy brown top."),
    ObjectClass("apple", "food", "Food", _G + ("EATABLE",),
                "Shiny red apple with a short brown stem and a yellow blush."),
    ObjectClass("pancake", "food", "Food", _G + ("EATABLE", "CUTTABLE"),
                "Stack of golden-brown pancakes with a pat of butter on top."),
    ObjectClass("poundcake", "food", "Food", _G + ("EATABLE", "CUTTABLE"),
                "Rectangular loaf of yellow pound cake with a dark crust."),
    ObjectClass("coffeepot", "tableware", "Props", _G + ("RECIPIENT", "CAN_OPEN"),
                "Glass coffee carafe with a black plastic handle and lid."),
    # tableware
    ObjectClass("plate", "tableware", "Props", _G + ("RECIPIENT", "SURFACES"),
                "Round white ceramic dinner plate with a thin blue rim."),
    ObjectClass("waterglass", "tableware", "Props", _G + ("RECIPIENT", "POURABLE"),
                "Clear straight-sided drinking glass with a thick base."),
    ObjectClass("wineglass", "tableware", "Props", _G + ("RECIPIENT", "POURABLE"),
                "Clear stemmed wine glass with a round bowl and thin stem."),
    ObjectClass("cutleryfork", "tableware", "Props", _G,
                "Stainless steel dinner fork with four tines and a flat handle."),
]}

#: Look-alike distractors: grabbing one instead of the target is a wrong grab (Table 21).
LOOKALIKES: dict[str, ObjectClass] = {o.name: o for o in [
    ObjectClass("dishbowl", "tableware", "Props", _G + ("RECIPIENT",),
                "Round white ceramic bowl with a thin blue rim."),
    ObjectClass("milk", "food", "Food", _G + ("DRINKABLE", "POURABLE"),
                "White plastic milk bottle with a blue cap."),
    ObjectClass("cutleryknife", "tableware", "Props", _G,
                "Stainless steel table knife with a flat handle."),
    ObjectClass("notes", "office", "Props", _G + ("READABLE", "HAS_PAPER"),
                "Small notebook with a purple cover."),
    ObjectClass("creamybuns", "food", "Food", _G + ("EATABLE",),
                "Round cream bun with white frosting."),
    ObjectClass("condimentbottle", "food", "Props", _G + ("CREAM", "POURABLE"),
                "Squeeze bottle with a red cap."),
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
    name: str
    category: str
    properties: tuple[str, ...]
    opens: bool = False  # starts CLOSED when it can open


_C = ("CAN_OPEN", "CONTAINERS")
FURNITURE: dict[str, Furniture] = {f.name: f for f in [
    Furniture("fridge", "Appliances", _C + ("HAS_PLUG", "HAS_SWITCH"), opens=True),
    Furniture("stove", "Appliances", _C + ("HAS_SWITCH", "SURFACES"), opens=True),
    Furniture("dishwasher", "Appliances", _C + ("HAS_SWITCH",), opens=True),
    Furniture("microwave", "Appliances", _C + ("HAS_PLUG", "HAS_SWITCH"), opens=True),
    Furniture("cabinet", "Furniture", _C + ("SURFACES",), opens=True),
    Furniture("bookshelf", "Furniture", ("CONTAINERS", "SURFACES")),
    Furniture("sofa", "Furniture", ("SURFACES", "SITTABLE", "LIEABLE", "MOVABLE")),
    Furniture("bathroomcounter", "Furniture", ("SURFACES",)),
    Furniture("nightstand", "Furniture", _C + ("SURFACES",), opens=True),
    Furniture("bench", "Furniture", ("SURFACES", "SITTABLE", "LIEABLE", "MOVABLE")),
    Furniture("bed", "Furniture", ("SURFACES", "SITTABLE", "LIEABLE")),
    Furniture("desk", "Furniture", ("SURFACES", "MOVABLE")),
    Furniture("tvstand", "Furniture", ("SURFACES", "MOVABLE")),
    Furniture("kitchencounter", "Furniture", ("SURFACES",)),
    Furniture("coffeetable", "Furniture", ("SURFACES", "MOVABLE")),
    Furniture("kitchentable", "Furniture", ("SURFACES", "MOVABLE")),
    Furniture("chair", "Furniture", ("SITTABLE", "MOVABLE")),
    Furniture("toilet", "Furniture", ("SITTABLE", "CAN_OPEN")),
    Furniture("sink", "Furniture", ("RECIPIENT",)),
]}

def object_class(name: str) -> ObjectClass:
    """Catalogue entry of a task object or look-alike (error names the allowed classes)."""
    if name in TASK_OBJECTS:
        return TASK_OBJECTS[name]
    if name in LOOKALIKES:
        return LOOKALIKES[name]
    raise ValueError(f"object class: {name!r} is unknown; allowed: {', '.join(sorted(TASK_OBJECTS))}")
