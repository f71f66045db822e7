"""What the table-generating directives share: reST lines parsed into a directive's output nodes."""

from __future__ import annotations


def parsed(directive, lines: list[str]) -> list:
    """The nodes of ``lines`` (reST), parsed in ``directive``'s context."""
    from docutils import nodes
    from docutils.statemachine import StringList

    node = nodes.section()
    node.document = directive.state.document
    directive.state.nested_parse(StringList(lines), directive.content_offset, node)
    return node.children


def list_table(rows: list[list[str]], options: tuple[str, ...] = ()) -> list[str]:
    """A ``list-table`` of ``rows`` (the first is the header)."""
    lines = [".. list-table::", "   :header-rows: 1", *(f"   {o}" for o in options), ""]
    for row in rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return lines
