"""A triton outside the supported range fails with an error that names the range."""

import pytest

from triton_aot.compile.triton_adapter import SUPPORTED_TRITON, check_triton_version
from triton_aot.core.errors import UserError


@pytest.mark.parametrize("version", ["3.5.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0", "3.9.1+git1234"])
def test_supported(version):
    check_triton_version(version)


@pytest.mark.parametrize("version", ["3.4.0", "3.10.0", "4.0.0", "2.3.1", "nightly"])
def test_outside_range_names_the_range(version):
    with pytest.raises(UserError) as e:
        check_triton_version(version)
    assert f"triton {version} is not supported" in str(e.value)
    assert "3.5 to 3.9" in str(e.value)
    assert SUPPORTED_TRITON == ((3, 5), (3, 9))
