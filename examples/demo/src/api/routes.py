def health():
    return {"ok": True}
