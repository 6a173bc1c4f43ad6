# Which Python runs gitmem, found when the hook runs (a venv can be moved or removed):
# the one recorded at install, else the one behind `gitmem` on PATH, else python3 when
# it can import gitmem. gitmem_find sets $gitmem_python, or fails when gitmem is gone.
gitmem_find() {
    gitmem_python=
    if [ -x "@PYTHON@" ] && [ -f "@PACKAGE@/hooks.py" ]; then
        gitmem_python="@PYTHON@"
        return 0
    fi
    gitmem_script=$(command -v gitmem 2>/dev/null) || gitmem_script=
    if [ -n "$gitmem_script" ] && [ -f "$gitmem_script" ]; then
        gitmem_first=$(head -n 1 "$gitmem_script" 2>/dev/null) || gitmem_first=
        case $gitmem_first in
            "#!"*)
                gitmem_py=${gitmem_first#"#!"}
                gitmem_py=${gitmem_py# }
                gitmem_py=${gitmem_py%% *}
                if [ -x "$gitmem_py" ] && "$gitmem_py" -c 'import gitmem.hooks' 2>/dev/null; then
                    gitmem_python=$gitmem_py
                    return 0
                fi
                ;;
        esac
    fi
    if command -v python3 >/dev/null 2>&1 && python3 -c 'import gitmem.hooks' 2>/dev/null; then
        gitmem_python=python3
        return 0
    fi
    return 1
}
gitmem_gone() {
    echo "gitmem: $1: gitmem is gone (not at @PYTHON@, not on PATH); reinstall it, then run \`gitmem install-hooks\`" >&2
}
