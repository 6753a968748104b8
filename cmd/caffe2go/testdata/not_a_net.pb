this is not a NetDef
