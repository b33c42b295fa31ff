from mddframes.cli import main

raise SystemExit(main())
