from __future__ import annotations

from vaultkeeper.entry import main

main()
