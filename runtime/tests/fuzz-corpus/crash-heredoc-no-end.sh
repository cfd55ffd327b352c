cat <<EOF <<-X <<'Y' <<"Z"
$(pwd)
