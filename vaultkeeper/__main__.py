from __future__ import annotations

from vaultkeeper.cli import main

main()
