"""Nicknames for agents: horse breeds, handed out in order, with ordinals once they run out."""

from __future__ import annotations

BREEDS = (
    "Appaloosa", "Mustang", "Palomino", "Arabian", "Clydesdale", "Percheron", "Shire",
    "Friesian", "Lipizzaner", "Andalusian", "Haflinger", "Fjord", "Connemara", "Morgan",
    "Shetland", "Trakehner", "Hanoverian", "Holsteiner", "Lusitano", "Marwari", "Akhal-Teke",
    "Knabstrupper", "Criollo", "Paso", "Brumby", "Exmoor", "Dartmoor", "Falabella",
    "Suffolk", "Ardennes", "Belgian", "Camargue", "Comtois", "Dales", "Fell", "Highland",
    "Icelandic", "Kladruber", "Konik", "Mangalarga", "Noriker", "Orlov", "Quarab",
    "Shagya", "Sorraia", "Tersk", "Waler", "Welara",
)  # fmt: skip


def nickname(index: int) -> str:
    """The `index`-th nickname (0-based): the breeds in order, then "Mustang 2nd" and so on."""
    name = BREEDS[index % len(BREEDS)]
    round_ = index // len(BREEDS)
    return name if round_ == 0 else f"{name} {_ordinal(round_ + 1)}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
