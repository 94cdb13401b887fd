"""Load: pick a snapshot from data/, upload one or give a path; ingest it."""
import os
import tempfile

import streamlit as st

from engine.api import ingest
from engine.errors import BoilerscopeError
from pages import boot, conn, progress, state

s = boot.setup()
st.title("Load a snapshot")

SUFFIXES = (".parquet", ".jsonl", ".csv")
MAX_MB = st.get_option("server.maxUploadSize")


def do_ingest(path: str, label: str) -> None:
    try:
        sid, created = progress.run_with_progress(lambda cb: ingest(path, store=s), f"Ingesting {label}")
    except BoilerscopeError as exc:
        st.error(str(exc))
        return
    state.set_snapshot(sid)
    st.session_state["load.message"] = (f"Snapshot {sid} {'ingested' if created else 'was already in the store'}.")
    st.session_state.pop("load.active", None)
    state.share()


source = st.radio("Source", ["Demo data", "Allowed folders", "Upload", "Path"], horizontal=True, key="load.source")
if source == "Demo data":
    files = []
    for f in sorted(os.listdir(boot.DATA_DIR)):
        if f.lower().endswith(SUFFIXES):
            try:  # a symlink out of data/ is not listed (the Path box refuses it too)
                boot.allowed_file(os.path.join(boot.DATA_DIR, f))
            except BoilerscopeError:
                continue
            files.append(f)
    pick = st.selectbox("Snapshot in data/", files, key="load.demo")
    if st.button("Ingest", key="load.ingest_demo", type="primary") and pick:
        try:
            do_ingest(boot.allowed_file(os.path.join(boot.DATA_DIR, pick)), pick)
        except BoilerscopeError as exc:
            st.error(str(exc))
elif source == "Allowed folders":
    found = boot.snapshot_files()
    if not found:
        st.info("No .parquet, .jsonl or .csv file in the allowed folders (" + ", ".join(boot.allowed_dirs())
                + "); copy one there or set BOILERSCOPE_ALLOWED_DIRS.")
    else:
        pick = st.selectbox("Snapshot file", found, key="load.pick")
        if st.button("Ingest", key="load.ingest_pick", type="primary") and pick:
            try:
                do_ingest(boot.allowed_file(pick), os.path.basename(pick))
            except BoilerscopeError as exc:
                st.error(str(exc))
elif source == "Upload":
    up = st.file_uploader(f"Parquet, JSONL or CSV (up to {MAX_MB} MB)", key="load.upload")
    if up is not None and st.button("Ingest upload", key="load.ingest_upload", type="primary"):
        ext = os.path.splitext(up.name)[1].lower()
        if ext not in SUFFIXES:
            st.error(f"{up.name}: unknown format; upload a .parquet, .jsonl or .csv snapshot")
        elif up.size > MAX_MB * 1024 * 1024:
            st.error(f"{up.name} is larger than the {MAX_MB} MB upload limit; give its path instead")
        else:
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "upload" + ext)
                with open(path, "wb") as fh:
                    fh.write(up.getbuffer())
                do_ingest(path, up.name)
else:
    path = st.text_input("Path of a snapshot file", key="load.path",
                         help="Allowed folders: " + ", ".join(boot.allowed_dirs()))
    if st.button("Ingest path", key="load.ingest_path", type="primary") and path:
        try:
            real = boot.allowed_file(path)
        except BoilerscopeError as exc:
            st.error(str(exc))
        else:
            do_ingest(real, os.path.basename(real))

if "load.message" in st.session_state:
    st.success(st.session_state.pop("load.message"))

snaps = s.snapshots()
st.subheader("Snapshots in the store")
if snaps.height == 0:
    st.info("The store is empty.")
else:
    st.dataframe(snaps.select("snapshot_id", "source", "documents", "sites", "tokens", "vocabulary", "created"),
                 hide_index=True, width="stretch")
    ids = snaps["snapshot_id"].to_list()
    current = state.get("snapshot")
    choice = st.selectbox("Active snapshot", ids, index=ids.index(current) if current in ids else 0,
                          key="load.active")
    if choice != current:
        state.set_snapshot(choice)
        st.rerun()
    info = conn.snapshot_info(s.path, choice)
    a, b, d = st.columns(3)
    a.metric("Documents", f"{info['documents']:,}")
    b.metric("Sites", f"{info['sites']:,}")
    d.metric("Tokens", f"{info['tokens']:,}")
