# SPDX-License-Identifier: Apache-2.0
"""``python -m greenctx ARGS`` runs the greenctx command (see greenctx._cli)."""

from greenctx._cli import main

main()
