"""Plot helpers for claims: figures are saved and closed, never shown."""


def new_figure(*args, **kwargs):
    """Create a figure with pyplot, whichever backend the caller selected."""
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def save_figure(fig, out_dir, name):
    """Save ``fig`` as ``<out_dir>/<name>.png``, close it, and return the file name."""
    import matplotlib.pyplot as plt

    filename = f"{name}.png"
    fig.tight_layout()
    fig.savefig(out_dir / filename, dpi=110, metadata={"Software": "skpaper"})
    plt.close(fig)
    return filename
