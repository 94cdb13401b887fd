"""Mine: tune sigma and L, run the engine, browse the run history."""
import polars as pl
import streamlit as st

from engine.constants import ALGOS, DEFAULT_ALGO, DEFAULT_MAX_SLOT, DEFAULT_MIN_LEN, DEFAULT_SIGMA, MAX_SLOT_RANGE
from engine.errors import BoilerscopeError
from engine.params import parse_sigma
from engine.ui import actions, boot, data, state

MAX_MIN_LEN = 1000

boot.setup()
st.title("Mine repeated phrases")
sid = boot.need_snapshot()
info = data.snapshot_info(sid)
st.caption(f"Snapshot {sid}: {info['documents']:,} documents, {info['tokens']:,} tokens, {info['sites']} sites")

# one range per parameter for the slider and the exact input, and every value
# (from a widget, a stored run or a shared URL) is clamped into it: a snapshot
# of 5 documents, or ?sigma=1500, never raises inside a widget
n_docs = max(int(info["documents"]), 1)
RANGES = {"sigma": (1, max(2, n_docs)), "min_len": (2, MAX_MIN_LEN)}


def mining_seconds(seconds: dict) -> float:
    """The miner's own time (older runs have no "mining" entry: sum its stages)."""
    if "mining" in seconds:
        return seconds["mining"]
    skip = ("ingest", "load", "choose", "results", "store", "total", "second_pass")
    return sum(v for k, v in seconds.items() if k not in skip)


def clamp(key: str, value, default: int) -> int:
    lo, hi = RANGES[key]
    try:
        value = int(value)
    except (TypeError, ValueError):
        value = default
    return min(max(value, lo), hi)


run_info = data.run(state.get("run")) if state.get("run") else {}
for key, default in (("sigma", min(DEFAULT_SIGMA, RANGES["sigma"][1])), ("min_len", DEFAULT_MIN_LEN)):
    state.put(key, clamp(key, state.get(key) if state.get(key) is not None else run_info.get(key), default))


def log_steps(hi: int, value: int) -> list[int]:
    """Slider stops from 1 to ``hi``: every value up to 20, then about 12 per
    decade (a log scale), plus the current value."""
    steps = set(range(1, min(hi, 20) + 1)) | {hi, value}
    x = 20.0
    while x < hi:
        steps.add(int(round(x)))
        x *= 10 ** (1 / 12)
    return sorted(v for v in steps if 1 <= v <= hi)


def sync(src: str, key: str):
    raw = st.session_state[src]
    state.put(key, clamp(key, raw, state.get(key)))
    if raw is not None and raw != state.get(key):
        lo, hi = RANGES[key]
        what = {"sigma": "sigma counts documents", "min_len": "L counts tokens"}[key]
        st.session_state["mine.clamped"] = f"{raw:,} is out of range ({what}: {lo:,} to {hi:,}); set to {state.get(key):,}."


def from_share():
    """sigma as a share of the documents ("0.5%", rounded up), as on the command line."""
    text = st.session_state.get("mine.share", "").strip()
    if not text:
        return
    try:
        state.put("sigma", clamp("sigma", parse_sigma(text if text.endswith("%") else text + "%", n_docs), 1))
        st.session_state["mine.share_error"] = None
    except BoilerscopeError as exc:
        st.session_state["mine.share_error"] = str(exc)


for key in ("sigma", "min_len"):
    for w in (f"mine.{key}", f"mine.{key}_n"):
        if st.session_state.get(w) != state.get(key):
            st.session_state[w] = state.get(key)

left, mid, right = st.columns([3, 1, 1])
left.select_slider("sigma: minimum documents (log scale)", log_steps(RANGES["sigma"][1], state.get("sigma")),
                   key="mine.sigma", on_change=sync, args=("mine.sigma", "sigma"))
# the exact inputs take any whole number and clamp it with a message (a bound
# on the widget itself draws an error icon over the value, below or above)
mid.number_input("sigma", step=1, key="mine.sigma_n", on_change=sync, args=("mine.sigma_n", "sigma"))
right.text_input("or a share", key="mine.share", on_change=from_share, placeholder="0.5%",
                 help="a share of the documents, rounded up")
if st.session_state.get("mine.share_error"):
    st.error(st.session_state["mine.share_error"])
left, mid, _ = st.columns([3, 1, 1])
left.slider("L: minimum length (tokens)", *RANGES["min_len"], key="mine.min_len", on_change=sync,
            args=("mine.min_len", "min_len"))
mid.number_input("L", step=1, key="mine.min_len_n", on_change=sync, args=("mine.min_len_n", "min_len"))
if st.session_state.get("mine.clamped"):
    st.warning(st.session_state.pop("mine.clamped"))
algo = st.selectbox("Algorithm", list(ALGOS), index=ALGOS.index(DEFAULT_ALGO), key="mine.algo",
                    help="auto picks fhk on long periodic runs, else bloomspan; "
                         "fhk: the suffix-array baseline (same answer)")

t1, t2, _ = st.columns([2, 1, 2])
with_templates = t1.checkbox("Also mine templates with slots", key="mine.templates",
                             help="«posted by * on * leave a comment»: repeats whose variable parts (names, dates, "
                                  "counts) split them into short phrases; see the Templates page")
width = t2.number_input("slot width (tokens)", *MAX_SLOT_RANGE, DEFAULT_MAX_SLOT, key="mine.max_slot",
                        disabled=not with_templates, help="W: the most tokens a slot stands for")

pending = actions.pending("mine", sid)  # this tab's job, or one mining this snapshot (another tab's, a reload)
if st.button("Run", type="primary", key="mine.run"):
    sigma, L = state.get("sigma"), state.get("min_len")
    max_slot = int(width) if with_templates else 0
    existing = data.find_run(sid, sigma, L, algo, max_slot)
    if existing is not None:
        state.set_run(int(existing))
        st.session_state["mine.message"] = f"Reused stored run {existing} (same snapshot and parameters)."
        pending = None
    else:
        pending = actions.start_mine(sid, sigma, L, algo, max_slot)  # or the job already mining them
if pending is not None:
    try:
        run = actions.follow(pending, "mine")
    except BoilerscopeError as exc:
        st.error(str(exc))  # cancelled or failed: the page goes on (the run history shows nothing new)
    else:
        state.set_run(run.run_id)
        st.session_state["mine.message"] = f"Run {run.run_id} done."
        st.session_state.pop("mine.active", None)
        state.share()

if "mine.message" in st.session_state:
    st.success(st.session_state.pop("mine.message"))

run_id = state.get("run")
if run_id is not None:
    summary = data.run(run_id).get("summary", {})
    st.subheader(f"Run {run_id}: sigma {summary.get('sigma')}, L {summary.get('min_len')}")
    if (summary.get("sigma"), summary.get("min_len")) != (state.get("sigma"), state.get("min_len")):
        st.caption(f"The sliders (sigma {state.get('sigma')}, L {state.get('min_len')}) are not mined yet: "
                   "press Run.")
    a, b, d, e = st.columns(4)
    a.metric("Covered tokens", f"{100 * summary.get('coverage', 0):.1f}%")
    b.metric("Maximal phrases", f"{summary.get('phrases', 0):,}")
    d.metric("Mining seconds", f"{mining_seconds(summary.get('seconds', {})):.2f}",
             help=f"numba compile or cache load, apart: {summary.get('compile_seconds', 0):.2f} s")
    e.metric("Total seconds", f"{summary.get('seconds', {}).get('total', 0):.2f}")
    if summary.get("templates"):
        t = summary["templates"]
        st.caption(f"{t['templates']:,} templates with slots (slot width {t['max_slot']}): coverage "
                   f"{100 * t['coverage_without_templates']:.1f}% from phrases alone, "
                   f"{100 * t['coverage_with_templates']:.1f}% with templates (the figure above).")
    with st.expander("Stage timings and filters"):
        st.json({"seconds": summary.get("seconds"), "filters": summary.get("filters"),
                 "compile_seconds": summary.get("compile_seconds")})

st.subheader("Run history")
runs = data.runs(sid)
if not runs.height:
    st.info("No runs yet for this snapshot.")
    st.stop()
# a run that mined no templates says so (not "None")
history = runs.drop("snapshot_id").with_columns(
    pl.col("templates").cast(pl.String).fill_null("not mined").alias("templates"))
st.dataframe(history, hide_index=True, width="stretch",
             column_config={"coverage": st.column_config.NumberColumn(format="percent"),
                            "seconds": st.column_config.NumberColumn(format="%.2f"),
                            "covered_tokens": st.column_config.NumberColumn(format="localized")})
ids = runs["run_id"].to_list()


def activate():
    pick = int(st.session_state["mine.active"])
    info = data.run(pick)
    state.set_run(pick)
    state.put("sigma", info.get("sigma"))
    state.put("min_len", info.get("min_len"))


st.session_state["mine.active"] = run_id if run_id in ids else ids[-1]
st.selectbox("Active run", ids, key="mine.active", on_change=activate)

with st.expander("Compare two runs, or delete one"):
    c1, c2 = st.columns(2)
    a_run = c1.selectbox("Run A", ids, index=max(len(ids) - 2, 0), key="mine.cmp_a")
    b_run = c2.selectbox("Run B", ids, index=len(ids) - 1, key="mine.cmp_b")
    if a_run != b_run:
        diff = data.compare_runs(int(a_run), int(b_run), sid)
        st.write(f"Phrases only in run {a_run}: **{diff['only_a'].height:,}**, only in run {b_run}: "
                 f"**{diff['only_b'].height:,}**, in both: **{diff['both']:,}**")
        g1, g2 = st.columns(2)
        g1.dataframe(diff["only_a"].head(200), hide_index=True, width="stretch")
        g2.dataframe(diff["only_b"].head(200), hide_index=True, width="stretch")
        st.dataframe(diff["sites"], hide_index=True, width="stretch",
                     column_config={k: st.column_config.NumberColumn(format="percent")
                                    for k in diff["sites"].columns if k.startswith("coverage")})
    victim = st.selectbox("Run to delete", ids, key="mine.delete_pick")
    sure = st.checkbox(f"Yes, delete run {victim} and its results", key="mine.delete_sure")
    if st.button("Delete run", key="mine.delete", disabled=not sure):
        actions.delete_run(int(victim))
        if victim == run_id:
            state.set_run(None)
        st.session_state.pop("mine.delete_sure", None)
        st.rerun()
