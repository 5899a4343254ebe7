"""Shrink the committed reproduction figures: ``python docs/_shrink_figures.py docs/results``.

Each PNG is narrowed to at most ``--max-width`` pixels and stored with a 256-colour
palette (matplotlib figures lose nothing visible). If the figures still exceed
``--budget-mb`` together, the largest are removed until they fit, and their names are
printed; the per-paper pages then show the claim without that figure.
"""

import argparse
from pathlib import Path

from PIL import Image


def shrink(path, max_width):
    with Image.open(path) as image:
        image.load()
        if image.width > max_width:
            height = round(image.height * max_width / image.width)
            image = image.resize((max_width, height), Image.LANCZOS)
        image = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        image.save(path, optimize=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--max-width", type=int, default=900)
    parser.add_argument("--budget-mb", type=float, default=3.0)
    args = parser.parse_args(argv)
    figures = sorted(Path(args.folder).glob("**/*.png"))
    for path in figures:
        shrink(path, args.max_width)
    sizes = {p: p.stat().st_size for p in figures}
    total = sum(sizes.values())
    budget = args.budget_mb * 2**20
    for path in sorted(sizes, key=sizes.get, reverse=True):
        if total <= budget:
            break
        total -= sizes[path]
        path.unlink()
        print(f"removed {path} ({sizes[path] / 1024:.0f} KiB): over the figure budget")
    print(f"{len(figures)} figures, {total / 2**20:.2f} MiB kept")


if __name__ == "__main__":
    main()
