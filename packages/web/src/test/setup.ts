import { configure } from '@testing-library/react';

// Async queries (findBy…, waitFor) wait up to 5 s: CI machines have two cores shared by parallel
// test files, and the default 1 s makes slow-but-correct renders fail.
configure({ asyncUtilTimeout: 5000 });
