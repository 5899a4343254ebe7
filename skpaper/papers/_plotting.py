"""Plot helpers for claims: figures are saved and closed, never shown."""


def new_figure(*args, **kwargs):
    """Create a figure with pyplot, whichever backend the caller selected."""
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def save_figure(fig, out_dir, name):
    """Save ``fig`` as ``<out_dir>/<name>.png`` atomically, close it, return the file name."""
    import io

    import matplotlib.pyplot as plt

    from ._registry import write_atomic

    filename = f"{name}.png"
    fig.tight_layout()
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=110, metadata={"Software": "skpaper"})
    finally:
        plt.close(fig)
    # Written through a temporary file and a rename: never a truncated PNG.
    write_atomic(out_dir / filename, buffer.getvalue())
    return filename
