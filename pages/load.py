"""Load: pick a snapshot from the demo folder, upload one or give a path; ingest it."""
import os
import tempfile

import streamlit as st

from engine.snapshot import FORMATS, suffix_of
from engine.errors import BoilerscopeError
from engine.ui import actions, boot, data, state

boot.setup()
st.title("Load a snapshot")
MAX_MB = st.get_option("server.maxUploadSize")


def ingested(result) -> None:
    sid, created = result
    state.set_snapshot(sid)
    st.session_state["load.message"] = f"Snapshot {sid} {'ingested' if created else 'was already in the store'}."
    state.share()


def do_ingest(path: str, label: str, origin: str | None = None, owned_dir: str | None = None) -> None:
    try:
        ingested(actions.ingest(path, label, origin, owned_dir))
    except BoilerscopeError as exc:
        st.error(str(exc))


def ingest_allowed(path: str, label: str) -> None:
    try:
        real = boot.allowed_file(path)
    except BoilerscopeError as exc:
        st.error(str(exc))
        return
    do_ingest(real, label or os.path.basename(real))


source = st.radio("Source", ["Demo data", "Allowed folders", "Upload", "Path"], horizontal=True, key="load.source")
if source == "Demo data":
    pick = st.selectbox("Snapshot in the demo folder", boot.demo_files(), key="load.demo",
                        help=boot.demo_folder())
    if st.button("Ingest", key="load.ingest_demo", type="primary") and pick:
        ingest_allowed(os.path.join(boot.demo_folder(), pick), pick)
elif source == "Allowed folders":
    found = boot.snapshot_files()
    if not found:
        st.info(f"No {FORMATS} file in the allowed folders (" + ", ".join(boot.allowed_dirs())
                + "); copy one there or set BOILERSCOPE_ALLOWED_DIRS.")
    else:
        pick = st.selectbox("Snapshot file", found, key="load.pick")
        if st.button("Ingest", key="load.ingest_pick", type="primary") and pick:
            ingest_allowed(pick, os.path.basename(pick))
elif source == "Upload":
    up = st.file_uploader(f"Parquet, JSONL (plain, gzip, zstd or bz2) or CSV (up to {MAX_MB} MB)", key="load.upload")
    if up is not None and st.button("Ingest upload", key="load.ingest_upload", type="primary"):
        ext = suffix_of(up.name)
        if ext is None:
            st.error(f"{up.name}: unknown format; upload a snapshot ending in {FORMATS}")
        elif up.size > MAX_MB * 1024 * 1024:
            st.error(f"{up.name} is larger than the {MAX_MB} MB upload limit; give its path instead")
        else:
            # the job owns the copy and removes it when it ends (a rerun of the
            # page, Cancel included, must not delete the file it reads)
            tmp = tempfile.mkdtemp(prefix="boilerscope-upload-")
            path = os.path.join(tmp, "upload" + ext)
            with open(path, "wb") as fh:
                fh.write(up.getbuffer())
            do_ingest(path, up.name, origin=f"upload: {up.name}", owned_dir=tmp)
else:
    path = st.text_input("Path of a snapshot file", key="load.path",
                         help="Allowed folders: " + ", ".join(boot.allowed_dirs()))
    if st.button("Ingest path", key="load.ingest_path", type="primary") and path:
        ingest_allowed(path, "")

pending = actions.pending("ingest", None, attach=False)  # this tab's ingest, after a rerun or a visit elsewhere
if pending is not None:
    try:
        ingested(actions.follow(pending, "ingest", status=True))
    except BoilerscopeError as exc:
        st.error(str(exc))

if "load.message" in st.session_state:
    st.success(st.session_state.pop("load.message"))

snaps = data.snapshots()
st.subheader("Snapshots in the store")
if snaps.height == 0:
    st.info("The store is empty: load a snapshot above (the demo folder is "
            f"{boot.demo_folder()}; other folders through BOILERSCOPE_ALLOWED_DIRS, or upload a file).")
else:
    st.dataframe(snaps.select("snapshot_id", "source", "documents", "sites", "tokens", "vocabulary", "created"),
                 hide_index=True, width="stretch")
    ids = snaps["snapshot_id"].to_list()
    current = state.get("snapshot")
    if current not in ids:
        current = ids[0]
        state.set_snapshot(current)
    # the box is seeded from the view state on every run (an ingest just made
    # another snapshot active: the box shows it at once), and a pick writes it back
    st.session_state["load.active"] = current
    st.selectbox("Active snapshot", ids, key="load.active",
                 on_change=lambda: state.set_snapshot(st.session_state["load.active"]))
    info = data.snapshot_info(current)
    a, b, d = st.columns(3)
    a.metric("Documents", f"{info['documents']:,}")
    b.metric("Sites", f"{info['sites']:,}")
    d.metric("Tokens", f"{info['tokens']:,}")
