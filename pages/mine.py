"""Mine: tune sigma and L, run the engine, browse the run history."""
import streamlit as st

from engine.api import mine
from engine.errors import BoilerscopeError
from pages import common as c

s = c.setup()
st.title("Mine repeated phrases")
sid = c.get("snapshot")
if sid is None:
    st.info("No snapshot yet: load one on the Load page.")
    st.stop()
info = c.snapshot_info(s.path, sid)
st.caption(f"Snapshot {sid}: {info['documents']:,} documents, {info['tokens']:,} tokens, {info['sites']} sites")

# choices live in non-widget keys; the widgets are seeded from them
run_info = c.run_summary(s.path, c.get("run")) if c.get("run") else {}
if c.get("sigma") is None:
    c.put("sigma", int(run_info.get("sigma", 20)))
if c.get("min_len") is None:
    c.put("min_len", int(run_info.get("min_len", 10)))


def sync(src: str, key: str):
    c.put(key, int(st.session_state[src]))
    for w in (f"mine.{key}", f"mine.{key}_n"):
        st.session_state[w] = c.get(key)


for key in ("sigma", "min_len"):
    for w in (f"mine.{key}", f"mine.{key}_n"):
        if w not in st.session_state:
            st.session_state[w] = c.get(key)

left, right = st.columns([3, 1])
max_sigma = max(2, min(int(info["documents"]), 1000))
left.slider("sigma: minimum documents", 2, max_sigma, key="mine.sigma", on_change=sync, args=("mine.sigma", "sigma"))
right.number_input("sigma", 1, int(info["documents"]), key="mine.sigma_n", on_change=sync,
                   args=("mine.sigma_n", "sigma"))
left.slider("L: minimum length (tokens)", 2, 100, key="mine.min_len", on_change=sync,
            args=("mine.min_len", "min_len"))
right.number_input("L", 2, 10_000, key="mine.min_len_n", on_change=sync, args=("mine.min_len_n", "min_len"))
algo = st.selectbox("Algorithm", ["auto", "bloomspan", "fhk"], key="mine.algo",
                    help="auto picks fhk on long periodic runs, else bloomspan; "
                         "fhk: the suffix-array baseline (same answer, sigma >= 2)")

if st.button("Run", type="primary", key="mine.run"):
    sigma, L = c.get("sigma"), c.get("min_len")
    existing = s.find_run(sid, sigma, L, algo)
    if existing is not None:
        c.put("run", int(existing))
        st.session_state["mine.message"] = f"Reused stored run {existing} (same snapshot and parameters)."
    else:
        try:
            run = c.run_with_progress(
                lambda cb: mine(s.path, sigma, L, algo=algo, store=s, snapshot=sid, progress=cb),
                f"Mining sigma {sigma}, L {L}")
        except BoilerscopeError as exc:
            st.error(str(exc))
            st.stop()
        c.put("run", run.run_id)
        st.session_state["mine.message"] = f"Run {run.run_id} done."
    st.session_state.pop("mine.active", None)
    c.share()

if "mine.message" in st.session_state:
    st.success(st.session_state.pop("mine.message"))

run_id = c.get("run")
if run_id is not None:
    summary = c.run_summary(s.path, run_id).get("summary", {})
    st.subheader(f"Run {run_id}: sigma {summary.get('sigma')}, L {summary.get('min_len')}")
    a, b, d, e = st.columns(4)
    a.metric("Covered tokens", f"{100 * summary.get('coverage', 0):.1f}%")
    b.metric("Maximal phrases", f"{summary.get('phrases', 0):,}")
    d.metric("Mining seconds", f"{sum(v for k, v in summary.get('seconds', {}).items() if k in ('word_filter', 'counting_filter', 'second_pass', 'seeds', 'grow', 'coverage')):.2f}")
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
        c.put("run", int(pick))
        c.put("sigma", None)
        c.put("min_len", None)
        for w in ("mine.sigma", "mine.sigma_n", "mine.min_len", "mine.min_len_n"):
            st.session_state.pop(w, None)
        st.rerun()
else:
    st.info("No runs yet for this snapshot.")
