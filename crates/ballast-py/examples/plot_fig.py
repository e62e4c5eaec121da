"""Reproduce Figure 8.1 of Los & Sauerwald (SPAA 2022, "Balanced Allocations in Batches"):
the gap of batched processes against the batch size b/n, ours beside the published values.

Runs the item `batched22/fig8_1` at its quick scale (a second or so; ``--scale full`` for
the full figure, minutes on a laptop) into a pandas DataFrame and plots it with matplotlib.

    python crates/ballast-py/examples/plot_fig.py [--scale quick|reduced|full] [--out fig.png]
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

import ballast  # noqa: E402

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[2] / "configs" / "batched22" / "fig8_1.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="quick", choices=["quick", "reduced", "full"])
    ap.add_argument("--out", default=str(HERE / "fig8_1.png"), help="PNG to write")
    args = ap.parse_args()

    df = ballast.run(CONFIG, scale=args.scale)
    meta = df.attrs["metadata"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (name, g) in enumerate(df.groupby("series", sort=False)):
        color = f"C{i}"
        ax.errorbar(g["x"], g["value"], yerr=g["stderr"], color=color, marker="o", ms=3,
                    capsize=2, label=f"{name} (ballast)")
        if g["reference"].notna().any():
            ax.plot(g["x"], g["reference"], color=color, ls="--", lw=1,
                    label=f"{name} ({df.attrs['reference_labels'][0]})")
    ax.set_xlabel(df.attrs["x_label"])
    ax.set_ylabel(df.attrs["y_label"])
    ax.set_title(f"{meta['title']}\n{meta['scale']} scale, {meta['runs']} runs, seed {meta['seed']}",
                 fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"{df.attrs['id']}: {len(df)} rows, {meta['balls_simulated']} balls in "
          f"{meta['wall_time_s']:.2f} s -> {args.out}")


if __name__ == "__main__":
    main()
