"""Mine: tune sigma and L, run the engine, browse the run history."""
import streamlit as st

from engine.api import ALGOS, DEFAULT_ALGO, DEFAULT_MIN_LEN, DEFAULT_SIGMA, mine
from engine.errors import BoilerscopeError
from pages import boot, conn, progress, state

MAX_MIN_LEN = 1000

s = boot.setup()
st.title("Mine repeated phrases")
sid = state.get("snapshot")
if sid is None:
    st.info("No snapshot yet: load one on the Load page.")
    st.stop()
info = conn.snapshot_info(s.path, sid)
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


run_info = conn.run_summary(s.path, state.get("run")) if state.get("run") else {}
for key, default in (("sigma", min(DEFAULT_SIGMA, RANGES["sigma"][1])), ("min_len", DEFAULT_MIN_LEN)):
    state.put(key, clamp(key, state.get(key) if state.get(key) is not None else run_info.get(key), default))


def sync(src: str, key: str):
    state.put(key, clamp(key, st.session_state[src], state.get(key)))
    for w in (f"mine.{key}", f"mine.{key}_n"):
        st.session_state[w] = state.get(key)


for key in ("sigma", "min_len"):
    for w in (f"mine.{key}", f"mine.{key}_n"):
        if st.session_state.get(w) != state.get(key):
            st.session_state[w] = state.get(key)

left, right = st.columns([3, 1])
left.slider("sigma: minimum documents", *RANGES["sigma"], key="mine.sigma", on_change=sync,
            args=("mine.sigma", "sigma"))
right.number_input("sigma", *RANGES["sigma"], key="mine.sigma_n", on_change=sync,
                   args=("mine.sigma_n", "sigma"))
left.slider("L: minimum length (tokens)", *RANGES["min_len"], key="mine.min_len", on_change=sync,
            args=("mine.min_len", "min_len"))
right.number_input("L", *RANGES["min_len"], key="mine.min_len_n", on_change=sync,
                   args=("mine.min_len_n", "min_len"))
algo = st.selectbox("Algorithm", list(ALGOS), index=ALGOS.index(DEFAULT_ALGO), key="mine.algo",
                    help="auto picks fhk on long periodic runs, else bloomspan; "
                         "fhk: the suffix-array baseline (same answer)")

if st.button("Run", type="primary", key="mine.run"):
    sigma, L = state.get("sigma"), state.get("min_len")
    existing = s.find_run(sid, sigma, L, algo)
    if existing is not None:
        state.put("run", int(existing))
        st.session_state["mine.message"] = f"Reused stored run {existing} (same snapshot and parameters)."
    else:
        try:
            run = progress.run_with_progress(
                lambda cb: mine(s.path, sigma, L, algo=algo, store=s, snapshot=sid, progress=cb),
                f"Mining sigma {sigma}, L {L}")
        except BoilerscopeError as exc:
            st.error(str(exc))
            st.stop()
        state.put("run", run.run_id)
        st.session_state["mine.message"] = f"Run {run.run_id} done."
    st.session_state.pop("mine.active", None)
    state.share()

if "mine.message" in st.session_state:
    st.success(st.session_state.pop("mine.message"))

run_id = state.get("run")
if run_id is not None:
    summary = conn.run_summary(s.path, run_id).get("summary", {})
    st.subheader(f"Run {run_id}: sigma {summary.get('sigma')}, L {summary.get('min_len')}")
    a, b, d, e = st.columns(4)
    a.metric("Covered tokens", f"{100 * summary.get('coverage', 0):.1f}%")
    b.metric("Maximal phrases", f"{summary.get('phrases', 0):,}")
    d.metric("Mining seconds", f"{mining_seconds(summary.get('seconds', {})):.2f}")
    e.metric("Total seconds", f"{summary.get('seconds', {}).get('total', 0):.2f}")
    with st.expander("Stage timings and filters"):
        st.json({"seconds": summary.get("seconds"), "filters": summary.get("filters"),
                 "compile_seconds": summary.get("compile_seconds")})

st.subheader("Run history")
runs = s.runs(sid)
if runs.height:
    st.dataframe(runs.drop("snapshot_id"), hide_index=True, width="stretch")
    ids = runs["run_id"].to_list()
    pick = st.selectbox("Active run", ids, index=ids.index(run_id) if run_id in ids else len(ids) - 1,
                        key="mine.active")
    if pick != run_id:
        state.put("run", int(pick))
        state.put("sigma", None)
        state.put("min_len", None)
        for w in ("mine.sigma", "mine.sigma_n", "mine.min_len", "mine.min_len_n"):
            st.session_state.pop(w, None)
        st.rerun()
else:
    st.info("No runs yet for this snapshot.")
