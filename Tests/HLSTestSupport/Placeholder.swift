enum HLSTestSupportPlaceholder {}
