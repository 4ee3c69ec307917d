from modelvar.cli import main

raise SystemExit(main())
