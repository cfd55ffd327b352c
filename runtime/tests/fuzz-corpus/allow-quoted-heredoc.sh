cat <<'EOF'
$(git commit --no-verify)
rm -rf ~
EOF
